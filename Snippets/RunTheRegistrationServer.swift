// The registration server behind `coffer serve`, in your own process: keys, users and the replay cache in
// SQLite or PostgreSQL, and the scheme clients sign stated once.
// snippet.hide
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
// snippet.show
import CofferServer
import Hummingbird
import Logging

/// Serves on `port` behind a TLS-terminating proxy that clients reach as https:// (to serve TLS itself,
/// pass certificatePath: and keyPath: to application(host:port:certificatePath:keyPath:logger:)).
func serve(database: String, port: Int) async throws {
    let logger = Logger(label: "server", factory: ServerLogHandler.standardError)
    let store = try await DatabaseLocation(database).open(logger: logger)     // "postgres://…" or a SQLite file
    var options = RegistrationServer.Options()
    options.scheme = "https"          // what clients sign: the proxy's scheme, not this connection's
    let app = try RegistrationServer(store: store, options: options).application(host: "127.0.0.1", port: port, logger: logger)
    try await app.runService()        // until SIGTERM or SIGINT
}
// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
let port = probe.localAddress?.port ?? 0
try await probe.close().get()
let serving = Task { try await serve(database: "sqlite:\(folder)/server.sqlite", port: port) }
var healthy = false
for _ in 0..<600 where !healthy {
    if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(5)) {
        healthy = response.status == .ok
    } else {
        try await Task.sleep(for: .milliseconds(100))
    }
}
serving.cancel()
_ = await serving.result
guard healthy else { print("the server never answered /health"); exit(1) }
print("served /health on port", port)
