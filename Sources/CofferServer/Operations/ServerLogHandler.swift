import Foundation
public import Logging

/// swift-log's standard-error lines (`StreamLogHandler`'s format, byte for byte) from a handler that
/// renders its metadata only when a message is logged.
///
/// `StreamLogHandler` renders all of a logger's metadata into text each time one value is set, and a
/// server sets values on every request (Hummingbird its request id, the signature middleware the
/// key id) that a server logging at `info` never prints. Here setting a value is a dictionary
/// insert; a message's line merges the logger's metadata, the metadata provider's and the message's
/// own, in that order of precedence from lowest, as `StreamLogHandler` does.
///
/// ```swift
/// let logger = Logger(label: "coffer.serve", factory: ServerLogHandler.standardError)
/// ```
public struct ServerLogHandler: LogHandler {
    /// How a line is written.
    public enum Format: String, Sendable, CaseIterable {
        /// `StreamLogHandler`'s text lines.
        case text
        /// One JSON object per line: `time` (RFC 3339, UTC), `level`, `logger` (the label), `message`,
        /// and each metadata value under its own key (a key that collides with those four gets a
        /// `metadata.` prefix); nested metadata as JSON arrays and objects.
        case json
    }

    /// A handler writing to standard error, with the logging system's metadata provider.
    public static func standardError(label: String) -> ServerLogHandler {
        ServerLogHandler(writer: .standardError(label: label, metadataProvider: nil), metadataProvider: LoggingSystem.metadataProvider)
    }

    /// A handler writing `format` lines to standard error, with the logging system's metadata provider.
    public static func standardError(label: String, format: Format) -> ServerLogHandler {
        var handler = standardError(label: label)
        if format == .json { handler.json = JSONLines(label: label, stream: StandardErrorStream()) }
        return handler
    }

    /// A handler writing `format` lines for `label` to `stream`.
    public init(label: String, stream: any TextOutputStream & Sendable, format: Format, metadataProvider: Logger.MetadataProvider?) {
        self.init(label: label, stream: stream, metadataProvider: metadataProvider)
        if format == .json { json = JSONLines(label: label, stream: stream) }
    }

    /// A handler writing lines for `label` to `stream`, with `metadataProvider`'s metadata in each.
    public init(label: String, stream: any TextOutputStream & Sendable, metadataProvider: Logger.MetadataProvider?) {
        self.init(writer: StreamLogHandler(label: label, stream: stream, metadataProvider: nil), metadataProvider: metadataProvider)
    }

    /// Formats and writes; never holds metadata of its own, so it renders only at log time.
    private var writer: StreamLogHandler
    /// Writes JSON lines instead, when set.
    private var json: JSONLines?

    /// The logger's metadata, rendered only into the lines it logs.
    public var metadata: Logger.Metadata = [:]

    /// Metadata gathered at each message (task-local values, for example), between the logger's
    /// metadata and the message's own.
    public var metadataProvider: Logger.MetadataProvider?

    /// The lowest level logged.
    public var logLevel: Logger.Level {
        get { writer.logLevel }
        set { writer.logLevel = newValue }
    }

    private init(writer: StreamLogHandler, metadataProvider: Logger.MetadataProvider?) {
        self.writer = writer
        self.metadataProvider = metadataProvider
    }

    /// One value of the logger's metadata.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as `StreamLogHandler` would have with the same metadata.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let own = event.metadata, !own.isEmpty {
            merged.merge(own) { _, own in own }
        }
        var event = event
        event.metadata = merged
        if let json { json.write(event) } else { writer.log(event: event) }
    }
}

/// One JSON object per log line (``ServerLogHandler/Format/json``).
struct JSONLines: Sendable {
    let label: String
    let stream: any TextOutputStream & Sendable

    func write(_ event: LogEvent) {
        var object: [String: Any] = [
            "time": Self.timestamp(), "level": event.level.rawValue, "logger": label, "message": "\(event.message)",
        ]
        for (key, value) in event.metadata ?? [:] {
            object[object[key] == nil ? key : "metadata." + key] = Self.json(value)
        }
        // invariant: the object holds only strings, arrays and dictionaries of them, which always serialise.
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        var stream = stream
        stream.write(String(decoding: data, as: UTF8.self) + "\n")
    }

    static func json(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }

    /// RFC 3339 in UTC with milliseconds; one style for every line (a formatter made per line cost an
    /// allocation-heavy setup on each request's access line).
    static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func timestamp() -> String { Date().formatted(style) }
}

/// Standard error, one whole line per write (one `write(2)` under a process-wide lock, so lines from
/// several threads never interleave).
struct StandardErrorStream: TextOutputStream, Sendable {
    private static let lock = NSLock()

    mutating func write(_ string: String) {
        let bytes = Array(string.utf8)
        Self.lock.withLock {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Foundation.write(2, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                // A reader that went away (EPIPE) or a full disk: the line is dropped, never the server.
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
