import CofferPKCS11
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

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
        // A NUL in text ends a C string: the module path or label would be read in part.
        "pkcs11:object=k?module-path=/usr/lib/softhsm/libsofthsm2.so%00/tmp/other.so", "pkcs11:token=a%00b;object=k",
    ])
    func malformedOrLeakyURIsAreRefused(text: String) throws {
        let error = try #require(throws: PKCS11Error.malformedURI) { try PKCS11URI(text) }
        #expect(!error.reason.contains("123456"))
    }
}

/// Every attribute RFC 7512 defines is read into its field and written back in the canonical form.
@Suite("pkcs11: URIs (RFC 7512): every attribute")
struct PKCS11URIEveryAttributeTests {
    @Test func everyRFC7512AttributeReadsAndWritesBack() throws {
        let text = "pkcs11:token=release;manufacturer=SoftHSM%20project;model=SoftHSM%20v2;serial=d9d99d8799fe0a55;"
            + "slot-description=SoftHSM%20slot%20ID%200x19fe0a55;slot-manufacturer=SoftHSM%20project;slot-id=436079189;"
            + "library-manufacturer=SoftHSM;library-description=Implementation%20of%20PKCS11;library-version=2.6;"
            + "object=signing;id=%01%A0;type=private?module-name=softhsm2&module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/token-pin"
        let uri = try PKCS11URI(text)
        #expect(uri.token == "release" && uri.manufacturer == "SoftHSM project" && uri.model == "SoftHSM v2" && uri.serial == "d9d99d8799fe0a55")
        #expect(uri.slotDescription == "SoftHSM slot ID 0x19fe0a55" && uri.slotManufacturer == "SoftHSM project" && uri.slotID == 436_079_189)
        #expect(uri.libraryManufacturer == "SoftHSM" && uri.libraryDescription == "Implementation of PKCS11" && uri.libraryVersion == PKCS11Version(major: 2, minor: 6))
        #expect(uri.object == "signing" && uri.id == [0x01, 0xA0] && uri.type == "private")
        #expect(uri.moduleName == "softhsm2" && uri.modulePath == "/usr/lib/softhsm/libsofthsm2.so" && uri.pinSource == "file:/etc/token-pin")
        #expect(uri.description == text)
        #expect(try PKCS11URI(uri.description) == uri)
        #expect(uri.namesObject && !uri.tokenPart.namesObject && uri.tokenPart.modulePath == nil && uri.tokenPart.serial == uri.serial)
        // A major version alone has minor version 0.
        #expect(try PKCS11URI("pkcs11:library-version=3").libraryVersion == PKCS11Version(major: 3, minor: 0))
        // Attribute names are read in any case; values are not changed.
        #expect(try PKCS11URI("pkcs11:SERIAL=AbC").serial == "AbC")
    }
}

/// Every truncation of a URI, and every one-character change to it (the characters that structure a
/// URI, a stray `%`, a NUL, a non-ASCII letter), is read whole or refused with a typed error; what is
/// read writes back to text that reads as the same URI.
@Suite("pkcs11: URIs (RFC 7512): mutations")
struct PKCS11URIMutationTests {
    static let seeds = [
        "pkcs11:token=release;manufacturer=SoftHSM%20project;model=SoftHSM%20v2;serial=d9d99d8799fe0a55;object=k;id=%01%A0;type=private",
        "pkcs11:slot-id=436079189;slot-description=SoftHSM%20slot;library-version=2.6;library-manufacturer=SoftHSM?module-name=softhsm2&pin-source=file:/etc/pin",
    ]

    @Test(arguments: seeds)
    func truncatedOrMutatedURIsAreReadWholeOrRefused(seed: String) throws {
        let characters = Array(seed)
        var inputs = (0...characters.count).map { String(characters.prefix($0)) }
        let replacements: [Character] = [";", "?", "&", "=", "%", "\u{0}", "é", "A", "9", "."]
        for index in characters.indices {
            for replacement in replacements {
                var changed = characters
                changed[index] = replacement
                inputs.append(String(changed))
            }
            var removed = characters
            removed.remove(at: index)
            inputs.append(String(removed))
        }
        for text in inputs {
            do {
                let uri = try PKCS11URI(text)
                #expect(try PKCS11URI(uri.description) == uri, "\(text) → \(uri.description)")
            } catch {
                #expect(error.code == .malformedURI, "\(text): \(error.reason)")
            }
        }
    }
}

/// A URI's `pin-source=file:…` is read by the library, which reports (and does not print) whether users
/// other than the file's owner may read it.
@Suite("pkcs11: URIs (RFC 7512): PIN files")
struct PKCS11PINFileTests {
    @Test func aPINFileSaysWhetherOthersMayReadIt() throws {
        let folder = try TemporaryDirectory()
        try folder.write("123456\r\nsecond line\n", to: "pin")
        let path = folder.path("pin")
        for (mode, exposed) in [(0o644 as mode_t, true), (0o640, true), (0o606, true), (0o600, false), (0o400, false)] {
            #expect(chmod(path, mode) == 0)
            for source in ["file:\(path)", "file://\(path)", "file://localhost\(path)"] {
                var file = try #require(try PKCS11URI("pkcs11:object=k?pin-source=\(source)").pinFile())
                #expect(file.pin == Array("123456".utf8) && file.path == path)
                #expect(file.isExposedToOtherUsers == exposed && file.permissions == UInt32(mode), "mode \(String(mode, radix: 8))")
                file.wipe()
                #expect(file.pin.isEmpty)
            }
        }
        #expect(try PKCS11URI("pkcs11:object=k").pinFile() == nil)
        for source in ["|/usr/bin/pin-helper", "/etc/token-pin", "file://other.example/etc/pin", "file:"] {
            #expect(throws: PKCS11Error.malformedURI) { try PKCS11URI("pkcs11:object=k?pin-source=\(source)").pinFile() }
        }
        try folder.write("\n123456\n", to: "empty-first-line")
        for missing in [folder.path("nothing-here"), folder.path("empty-first-line")] {
            let error = try #require(throws: PKCS11Error.pinSourceUnreadable) { try PKCS11URI("pkcs11:object=k?pin-source=file:\(missing)").pinFile() }
            #expect(!error.reason.contains("123456"), "\(error.reason)")
        }
    }
}

/// What used to be parsed and dropped, or read twice with the last one winning, now narrows the match
/// or is refused: a slot-id or library-version that is not a number, an attribute given twice, a value
/// longer than the PKCS #11 field it is compared with (it could never match).
@Suite("pkcs11: URIs (RFC 7512): nothing is ignored")
struct PKCS11URINothingIgnoredTests {
    @Test(arguments: [
        "pkcs11:slot-id=abc", "pkcs11:slot-id=-1", "pkcs11:slot-id=", "pkcs11:slot-id=1%2E5", "pkcs11:slot-id=99999999999999999999999",
        "pkcs11:library-version=1.", "pkcs11:library-version=x", "pkcs11:library-version=256", "pkcs11:library-version=1.2.3", "pkcs11:library-version=.1",
        "pkcs11:token=a;token=b", "pkcs11:serial=1;SERIAL=2", "pkcs11:object=k?pin-source=file:/a&pin-source=file:/b",
        "pkcs11:token=\(String(repeating: "a", count: 33))", "pkcs11:serial=\(String(repeating: "1", count: 17))",
        "pkcs11:model=\(String(repeating: "m", count: 17))", "pkcs11:slot-description=\(String(repeating: "d", count: 65))",
        "pkcs11:object=k?x-vendor=1",
    ])
    func malformedAttributesAreRefused(text: String) throws {
        #expect(throws: PKCS11Error.malformedURI) { try PKCS11URI(text) }
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
