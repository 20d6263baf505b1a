import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Pins and host rules")
struct PinTests {
    @Test func readsEveryTextForm() throws {
        let base64 = "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="
        let bare = try Pin(base64)
        #expect(bare.kind == .publicKey && bare.base64 == base64 && bare.description == base64)
        #expect(try Pin("sha256/" + base64) == bare)
        #expect(try Pin("pin-sha256=\"\(base64)\"") == bare)
        #expect(try Pin("  \(base64)\n") == bare)
        let certificate = try Pin("cert-sha256/" + base64)
        #expect(certificate.kind == .certificate && certificate.description == "cert-sha256/" + base64)
        #expect(try Pin(certificate.description) == certificate)
    }

    @Test(arguments: [
        "", "abc", "sha1/r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=",
        "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5", // 43 characters
        "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=x", "md5-sha256/r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=",
        String(repeating: "A", count: 100_000),
    ])
    func rejectsMalformedPins(text: String) {
        #expect(throws: PinningError.malformedPin) { try Pin(text) }
    }

    @Test func requiresABackupPinUnlessAllowed() throws {
        let one = try Pin(kind: .publicKey, sha256: Array(repeating: 1, count: 32))
        let two = try Pin(kind: .publicKey, sha256: Array(repeating: 2, count: 32))
        let error = try #require(throws: PinningError.invalidPolicy, "one pin was accepted") { _ = try HostPins(host: "api.example.com", pins: [one]) }
        #expect(error.reason.contains("backup pin"))
        // The same pin twice is still one pin.
        #expect(throws: PinningError.self) { try HostPins(host: "api.example.com", pins: [one, one]) }
        #expect(try HostPins(host: "api.example.com", pins: [one], allowingSinglePin: true).pins == [one])
        #expect(try HostPins(host: "API.Example.com.", pins: [one, two]).host == "api.example.com")
        #expect(throws: PinningError.self) { try HostPins(host: "https://api.example.com", pins: [one, two]) }
        #expect(throws: PinningError.self) { try HostPins(host: "", pins: [one, two]) }
        #expect(throws: PinningError.self) { try HostPins(host: "a.example", pins: [one, two], positions: []) }
        #expect(throws: PinningError.self) { try Pin(kind: .publicKey, sha256: [1, 2, 3]) }
    }

    @Test func findsTheRuleForAHost() throws {
        let pins = [try Pin(kind: .publicKey, sha256: Array(repeating: 1, count: 32)), try Pin(kind: .publicKey, sha256: Array(repeating: 2, count: 32))]
        let parent = try HostPins(host: "example.com", includesSubdomains: true, pins: pins)
        let exact = try HostPins(host: "api.example.com", pins: pins, enforcement: .reportOnly)
        let policy = try PinningPolicy(hosts: [parent, exact])
        #expect(policy.rule(for: "API.example.com")?.enforcement == .reportOnly)
        #expect(policy.rule(for: "cdn.example.com")?.host == "example.com")
        #expect(policy.rule(for: "a.b.example.com")?.host == "example.com")
        #expect(policy.rule(for: "example.com")?.host == "example.com")
        #expect(policy.rule(for: "badexample.com") == nil)
        #expect(policy.rule(for: "example.org") == nil)
        #expect(throws: PinningError.self) { try PinningPolicy(hosts: [exact, exact]) }
    }

    @Test func computesPinsOfTheEncodedPublicKey() throws {
        let pki = try TestPKI(name: "Pins")
        let leaf = try pki.issueServerCertificate(for: ["localhost"])
        let parsed = try ChainCertificate(der: leaf.der)
        #expect(parsed.publicKeyPin.base64 == TestPKI.spkiPin(leaf.certificate))
        #expect(parsed.certificatePin.base64 == Data(SHA256Digest.of(leaf.der)).base64EncodedString())
        #expect(parsed.subject.contains("localhost"))
        // Same key, new certificate: same SPKI pin, different certificate pin.
        let reissued = try ChainCertificate(der: try pki.issueServerCertificate(for: ["localhost"], key: leaf.privateKey).der)
        #expect(reissued.publicKeyPin == parsed.publicKeyPin)
        #expect(reissued.certificatePin != parsed.certificatePin)
    }

    @Test func rejectsBytesThatAreNotACertificate() {
        for bytes in [[], [0x30, 0x03, 0x02, 0x01, 0x01], Array(repeating: 0x30, count: 70_000), Array("-----BEGIN CERTIFICATE-----".utf8)] as [[UInt8]] {
            #expect(throws: PinningError.self) { try ChainCertificate(der: bytes) }
        }
    }
}

/// SHA-256 through swift-crypto, for expected values.
import Crypto
enum SHA256Digest {
    static func of(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
}
