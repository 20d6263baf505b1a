import CofferServer
import Foundation
import Logging
import Testing

/// `coffer serve`'s log handler: StreamLogHandler's lines, with metadata rendered only when a line is
/// written.
@Suite("Server log handler")
struct ServerLogHandlerTests {
    /// Lines written, shared by the copies of a stream that a handler keeps.
    final class Lines: TextOutputStream, @unchecked Sendable {
        private let lock = NSLock()
        private var written: [String] = []
        func write(_ string: String) { lock.withLock { written.append(string) } }
        /// Each line without its timestamp (the first field), which two handlers cannot share.
        var withoutTimestamps: [String] {
            lock.withLock { written.map { String($0.drop { $0 != " " }) } }
        }
    }

    /// Counts how often it is rendered into text.
    final class Rendered: CustomStringConvertible, @unchecked Sendable {
        private let lock = NSLock()
        private var renderings = 0
        var count: Int { lock.withLock { renderings } }
        var description: String {
            lock.withLock { renderings += 1 }
            return "0123"
        }
    }

    @Test func writesTheLinesStreamLogHandlerWrites() {
        let provider = Logger.MetadataProvider { ["trace": "t1", "shared": "from-provider"] }
        let theirs = Lines(), ours = Lines()
        var loggers = [
            Logger(label: "coffer.serve") { StreamLogHandler(label: $0, stream: theirs, metadataProvider: provider) },
            Logger(label: "coffer.serve") { ServerLogHandler(label: $0, stream: ours, metadataProvider: provider) },
        ]
        for index in loggers.indices {
            loggers[index].logLevel = .debug
            loggers[index][metadataKey: "hb.request.id"] = "abc"
            loggers[index][metadataKey: "shared"] = "from-logger"
            loggers[index].info("plain")
            loggers[index].warning("with its own", metadata: ["shared": "from-message", "status": "401"])
            loggers[index].trace("below the level")
            loggers[index][metadataKey: "hb.request.id"] = nil
            loggers[index].debug("after removal")
        }
        let expected = theirs.withoutTimestamps
        #expect(expected.count == 3)
        #expect(ours.withoutTimestamps == expected)
        #expect(expected.first?.contains("shared=from-provider") == true, "the provider's value over the logger's")
    }

    @Test func metadataIsRenderedOnlyWhenALineIsWritten() {
        let rendered = Rendered()
        var logger = Logger(label: "coffer.serve") { ServerLogHandler(label: $0, stream: Lines(), metadataProvider: nil) }
        logger.logLevel = .info
        for _ in 0..<100 {
            logger[metadataKey: "hb.request.id"] = .stringConvertible(rendered)
            logger[metadataKey: "signature.keyid"] = "device-1"
            logger.debug("not logged at info")
        }
        #expect(rendered.count == 0)
        logger.info("logged")
        #expect(rendered.count == 1)
    }
}
