// Pinning to a certificate bundled with the app: the connection is accepted only when the server's chain
// validates against it, names the host, and contains the pinned certificate.
import CofferPinning
import CofferTesting

// snippet.hide
let pki = try TestPKI(name: "Snippet")
let leaf = try pki.issueServerCertificate(for: ["localhost"])
let server = try await LoopbackTLSServer(chain: [leaf.der, pki.intermediate.der], privateKeyPEM: leaf.privateKey.pemRepresentation)
let bundledCertificate = pki.root.certificate
// snippet.show
// The bundled certificate is both the trust anchor and the pin; a backup pin would sit beside it.
let pin = Pin(certificate: TestPKI.der(bundledCertificate))
let policy = try PinningPolicy(
    hosts: [try HostPins(host: "localhost", pins: [pin], allowingSinglePin: true)],
    trust: .only([bundledCertificate])
)
let evaluator = PinningEvaluator(policy: policy)

let report = try await TLSProbe.check(host: "127.0.0.1", port: server.port, serverName: "localhost", evaluator: evaluator)
print("verdict:", report.verdict)
// snippet.hide
try await server.shutdown()
// snippet.show
