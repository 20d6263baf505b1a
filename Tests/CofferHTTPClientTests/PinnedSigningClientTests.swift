import AsyncHTTPClient
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferPinning
import CofferTestSupport
import HTTPTypes
import NIOCore
import Testing

/// The signing helper, `AdminClient` and `DataKeyClient` given a client pinned to their server's host
/// (`pinned(by:host:)`): a server presenting a certificate from the trusted CA for another name that
/// carries the connected address (issue 42, item 1) is refused before a signed request is sent; the
/// real server's connection passes.
@Suite("Signed requests through a pinned client")
struct PinnedSigningClientTests {
    let scene: ConnectedAddressScene
    init() throws { scene = try ConnectedAddressScene() }

    /// A client for `localhost`, pinned to the real key.
    func pinnedClient() throws -> HTTPClient {
        let pins = [try ChainCertificate(der: scene.real.der).publicKeyPin, try Pin(kind: .publicKey, sha256: Array(repeating: 9, count: 32))]
        let evaluator = PinningEvaluator(policy: try PinningPolicy(hosts: [HostPins(host: "localhost", pins: pins)], trust: .only([scene.pki.root.certificate])))
        var configuration = try HTTPClient.Configuration.pinned(by: evaluator, host: "localhost")
        configuration.timeout.connect = .seconds(120)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Whether `error` is a refusal by the pins or by validation for the host asked for.
    static func isPinningRefusal(_ error: (any Error)?) -> Bool {
        let pinning = (error as? PinningError) ?? ((error as? ServerClientError)?.underlying as? PinningError)
        return pinning.map { $0.code == .chainNotTrusted || $0.code == .pinMismatch } ?? false
    }

    @Test func theSigningHelperAndTheServerClientsRefuseTheImpostor() async throws {
        let client = try pinnedClient()
        let key = try SigningKey.generate(.ed25519)
        let signer = HTTPMessageSigner(key: try HTTPSigningKey(key), keyID: "device")
        do {
            try await scene.withServers { impostor, real in
                let request = HTTPRequest(method: .post, scheme: "https", authority: "localhost:\(impostor)", path: "/orders")
                let refused = await #expect(throws: (any Error).self) { try await client.execute(signing: request, body: Array("{}".utf8), with: signer, timeout: .seconds(120)) }
                #expect(Self.isPinningRefusal(refused), "\(String(describing: refused))")
                var toReal = request
                toReal.authority = "localhost:\(real)"
                let answered = try await client.execute(signing: toReal, body: Array("{}".utf8), with: signer, timeout: .seconds(120))
                #expect(answered.status == .ok)

                let admin = try AdminClient(server: "https://localhost:\(impostor)", key: key, client: client, timeout: .seconds(120))
                let adminRefused = await #expect(throws: ServerClientError.unreachable) { try await admin.keys() }
                #expect(Self.isPinningRefusal(adminRefused), "\(String(describing: adminRefused))")
                let dataKeys = try DataKeyClient(server: "https://localhost:\(impostor)", signer: signer, identity: .generateX25519(), client: client, timeout: .seconds(120))
                let dataKeyRefused = await #expect(throws: ServerClientError.self) { try await dataKeys.fetch() }
                #expect(Self.isPinningRefusal(dataKeyRefused), "\(String(describing: dataKeyRefused))")

                // The real server passes the pins; its answer ("ok") is not the admin API's JSON.
                let realAdmin = try AdminClient(server: "https://localhost:\(real)", key: key, client: client, timeout: .seconds(120))
                await #expect(throws: ServerClientError.unexpectedAnswer) { try await realAdmin.keys() }
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
