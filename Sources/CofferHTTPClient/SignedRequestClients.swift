import AsyncHTTPClient
import Foundation

/// The clients signed requests are sent through: never one that follows redirects.
///
/// AsyncHTTPClient follows redirects per client (`HTTPClient.Configuration.redirectConfiguration`), not
/// per request, and a client that follows them would carry a signed request — its `Signature`,
/// `Signature-Input` and `Content-Digest`, with a nonce the real server has not seen yet, and its body —
/// to whatever origin a `Location` names, which could replay it to the real server within its window.
/// AsyncHTTPClient does not publish a client's configuration, so it is read by reflection: a client
/// that does not follow redirects is used as it is; one that does (`HTTPClient.shared`, and every
/// client made with AsyncHTTPClient's default configuration) sends through a twin made from the same
/// configuration — TLS, proxy, connection hooks (pinning), timeouts — with redirects turned off, kept
/// while the client lives. A client whose configuration cannot be read is refused: nothing is sent.
final class SignedRequestClients: @unchecked Sendable {
    /// The twins of every client signed requests went through, in this process.
    static let shared = SignedRequestClients()

    private struct Twin {
        weak var original: HTTPClient?
        let client: HTTPClient
    }

    private let lock = NSLock()
    private var twins: [ObjectIdentifier: Twin] = [:]

    /// The client that sends a signed request given to `original`: `original` itself when it does not
    /// follow redirects, else its redirect-free twin.
    /// - Throws: ``ServerClientError`` `.unsupportedClient` when `original`'s configuration cannot be read.
    func client(sending original: HTTPClient) throws(ServerClientError) -> HTTPClient {
        guard let configuration = Mirror(reflecting: original).descendant("configuration") as? HTTPClient.Configuration else {
            throw ServerClientError(
                .unsupportedClient,
                "this AsyncHTTPClient version does not let its configuration be read, so a signed request could not be kept from following redirects; nothing was sent"
            )
        }
        if !Self.followsRedirects(configuration) { return original }
        var released: [HTTPClient] = []
        let twin = lock.withLock { () -> HTTPClient in
            // Twins of clients that are gone are shut down.
            for (key, twin) in twins where twin.original == nil {
                twins[key] = nil
                released.append(twin.client)
            }
            let key = ObjectIdentifier(original)
            if let twin = twins[key], twin.original === original { return twin.client }
            var withoutRedirects = configuration
            withoutRedirects.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroup: original.eventLoopGroup, configuration: withoutRedirects)
            twins[key] = Twin(original: original, client: client)
            return client
        }
        for client in released {
            Task { try? await client.shutdown() }
        }
        return twin
    }

    /// Whether `configuration` follows redirects: false only when it plainly does not (its redirect mode
    /// is `disallow`), true otherwise, unknown forms included.
    static func followsRedirects(_ configuration: HTTPClient.Configuration) -> Bool {
        guard let mode = Mirror(reflecting: configuration.redirectConfiguration).descendant("mode") else { return true }
        let reflected = Mirror(reflecting: mode)
        return !(reflected.displayStyle == .enum && reflected.children.isEmpty && String(describing: mode) == "disallow")
    }
}
