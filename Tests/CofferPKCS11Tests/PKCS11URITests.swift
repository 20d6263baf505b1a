import CofferPKCS11
import Foundation
import Testing

/// RFC 7512 URIs: the RFC's own examples parse, Coffer's output is canonical, and what would be
/// ignored or would leak a PIN is refused.
@Suite("pkcs11: URIs (RFC 7512)")
struct PKCS11URITests {
    @Test func theRFCsExamplesParse() throws {
        let token = try PKCS11URI("pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=")
        #expect(token.token == "The Software PKCS#11 Softtoken")
        #expect(token.manufacturer == "Snake Oil, Inc.")
        #expect(token.object == "my-certificate" && token.type == "cert")
        #expect(token.id == [0x69, 0x95, 0x3E, 0x5C, 0xF4, 0xBD, 0xEC, 0x91])
        let query = try PKCS11URI("pkcs11:object=my-sign-key;type=private?module-path=/mnt/libmypkcs11.so.1&pin-source=file:/etc/token_pin")
        #expect(query.modulePath == "/mnt/libmypkcs11.so.1" && query.pinSource == "file:/etc/token_pin")
        #expect(try PKCS11URI("pkcs11:").object == nil)
    }

    @Test func whatCofferWritesReadsBack() throws {
        let uri = PKCS11URI(token: "release keys", object: "signing;2026", id: [0, 255], type: "private", modulePath: "/usr/lib/softhsm/libsofthsm2.so")
        #expect(uri.description == "pkcs11:token=release%20keys;object=signing%3B2026;id=%00%FF;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so")
        #expect(try PKCS11URI(uri.description) == uri)
    }

    @Test(arguments: [
        "file:/key.pem", "pkcs11:object", "pkcs11:id=%0", "pkcs11:id=%zz", "pkcs11:type=secret", "pkcs11:colour=red",
        "pkcs11:object=k?pin-value=123456", "pkcs11:object=k?frobnicate=1", "pkcs11:object=%FF%FE",
    ])
    func malformedOrLeakyURIsAreRefused(text: String) throws {
        let error = try #require(throws: PKCS11Error.self) { try PKCS11URI(text) }
        #expect(error.code == .malformedURI)
        #expect(!error.reason.contains("123456"))
    }
}

/// CI installs SoftHSM2 and says so (`COFFER_REQUIRE_SOFTHSM=1`): there, the token tests must not skip.
@Suite("SoftHSM2 where CI installs it")
struct SoftHSMPresenceTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["COFFER_REQUIRE_SOFTHSM"] == "1"))
    func theTokenTestsRun() throws {
        #expect(SoftHSM.isAvailable, "SoftHSM2's module is in none of the usual places")
        _ = try SoftHSM.module.get()
    }
}
