public import CofferTesting

/// Issue 42's pinning reproduction as a fixture: one CA the client trusts, the real server's leaf for
/// `localhost`, and the impostor's leaf from the same CA for another name that carries the connected
/// addresses (`DNS:other.example, IP:127.0.0.1, IP:::1`), which NIOSSL accepts for any name asked for.
public struct ConnectedAddressScene: Sendable {
    /// The CA both leaves come from.
    public let pki: TestPKI
    /// The real server's leaf, for `localhost`.
    public let real: TestPKI.Issued
    /// The impostor's leaf, for `other.example` and the loopback addresses.
    public let impostor: TestPKI.Issued

    /// A new CA and both leaves.
    public init() throws {
        pki = try TestPKI(name: "Connected address")
        real = try pki.issueServerCertificate(commonName: "localhost", alternativeNames: ["localhost"])
        impostor = try pki.issueServerCertificate(commonName: "other.example", alternativeNames: ["other.example", "127.0.0.1", "::1"])
    }

    /// Runs `body` with the ports of two loopback TLS servers, the impostor's and the real one, and
    /// shuts them down after.
    public func withServers(_ body: (_ impostor: Int, _ real: Int) async throws -> Void) async throws {
        let impostorServer = try await LoopbackTLSServer(chain: [impostor.der, pki.intermediate.der], privateKeyPEM: impostor.privateKey.pemRepresentation)
        let realServer = try await LoopbackTLSServer(chain: [real.der, pki.intermediate.der], privateKeyPEM: real.privateKey.pemRepresentation)
        do {
            try await body(impostorServer.port, realServer.port)
        } catch {
            try? await impostorServer.shutdown()
            try? await realServer.shutdown()
            throw error
        }
        try await impostorServer.shutdown()
        try await realServer.shutdown()
    }
}
