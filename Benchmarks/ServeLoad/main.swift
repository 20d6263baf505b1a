// The server bench/serve-load.py drives: `coffer serve`'s routes, built from the library's public API
// (`RegistrationServer.router()`), plus the unsigned twin of `POST /register_user` (UnsignedTwin), so
// the harness can show what verifying a signature costs.
//
//   cd Benchmarks && swift run -c release serve-load-server --database sqlite:/tmp/load.sqlite --port 0
//
// With `--master-key-file FILE` (32 bytes) it serves `POST /data-keys` as `coffer serve` does.
//
// The twin names its key in the `Coffer-Unsigned-Key-Id` header field. The per-address limits are off: the
// load generator is one address.
import CofferServer
import Foundation
import Hummingbird
import Logging
import UnsignedTwin

struct Arguments {
    var host = "127.0.0.1"
    var port = 0
    var database: String?
    var masterKeyFile: String?

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Failure("\(flag) needs a value") }
            switch flag {
            case "--host": host = value
            case "--port": port = Int(value) ?? 0
            case "--database": database = value
            case "--master-key-file": masterKeyFile = value
            default: throw Failure("unknown option \(flag); expected --host, --port, --database, --master-key-file")
            }
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@main
enum ServeLoadServer {
    static func main() async throws {
        let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
        var logger = Logger(label: "serve-load-server", factory: ServerLogHandler.standardError)
        logger.logLevel = .warning
        let store = try await DatabaseLocation(arguments.database).open(logger: logger)
        var options = RegistrationServer.Options()
        options.registrationsPerMinute = nil
        options.signatureFailuresPerMinute = nil
        options.signUpsPerKey = nil  // one key signs up every user of the load
        if let path = arguments.masterKeyFile {
            options.masterKey = try ServerMasterKey(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        let router = try RegistrationServer(store: store, options: options).router()
        try addUnsignedTwin(to: router, store: store)
        let host = arguments.host
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: arguments.port), serverName: "coffer"),
            onServerRunning: { channel in
                // One write(2), so the harness reads the line at once (print would buffer it in a pipe).
                let line = Array("listening on http://\(host):\(channel.localAddress?.port ?? 0)\n".utf8)
                _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            },
            logger: logger
        )
        try await app.runService()
        try await store.close()
    }
}
