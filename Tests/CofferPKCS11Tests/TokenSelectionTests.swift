import CofferCore
import CofferCrypto
@testable import CofferPKCS11
import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Two tokens that say the same label, as a second card or a rogue token plugged in beside the real
/// one does: each with its own user PIN and a P-256 key labelled "signing". No session is left open,
/// so neither is logged in (a token's login ends with its last session).
struct TwinTokens {
    let label: String
    /// The token of the label that enumerates first (which the label alone used to select).
    let first: PKCS11Slot
    /// The other.
    let second: PKCS11Slot
    let pins: [String: [UInt8]]
    let keys: [String: VerifyingKey]

    static func make() throws -> TwinTokens {
        let module = try SoftHSM.module.get()
        let label = SoftHSM.uniqueLabel("twin")
        var pins: [String: [UInt8]] = [:]
        var keys: [String: VerifyingKey] = [:]
        for pin in ["111111", "222222"] {
            let free = try #require(try module.slots(withTokenOnly: false).first { $0.token?.isInitialized == false })
            let slot = try module.initializeToken(slot: free, label: label, securityOfficerPIN: SoftHSM.securityOfficerPIN, userPIN: Array(pin.utf8))
            let serial = try #require(slot.token?.serialNumber)
            pins[serial] = Array(pin.utf8)
            keys[serial] = try module.openSession(slot: slot, pin: Array(pin.utf8)).generateKeyPair(.p256, label: "signing").publicKey
        }
        let slots = try module.slots().filter { $0.token?.label == label }
        try #require(slots.count == 2)
        return TwinTokens(label: label, first: slots[0], second: slots[1], pins: pins, keys: keys)
    }

    func serial(_ slot: PKCS11Slot) -> String { slot.token?.serialNumber ?? "" }
    func pin(_ slot: PKCS11Slot) -> [UInt8] { pins[serial(slot)] ?? [] }
    func key(_ slot: PKCS11Slot) -> VerifyingKey? { keys[serial(slot)] }

    /// Whether a wrong PIN has reached the token since its last successful login: SoftHSM2 sets
    /// `CKF_USER_PIN_COUNT_LOW` in the token's flags on every failed `C_Login` (and keeps it on disk).
    static func wrongPINReached(_ slot: PKCS11Slot) throws -> Bool {
        let module = try SoftHSM.module.get()
        let now = try #require(try module.slots().first { $0.token?.serialNumber == slot.token?.serialNumber }?.token)
        return now.wrongPINTriedSinceLastLogin
    }
}

/// A `pkcs11:` URI selects exactly the token and the key it names: every RFC 7512 attribute is
/// matched, two tokens or two keys that match are refused before any PIN is sent, and a URI that
/// matches nothing says which attribute did not match what was found.
extension SoftHSMTests {
    @Suite("A pkcs11: URI selects exactly what it names")
    struct TokenSelectionTests {
        /// Issue 42, item 5: a URI naming token B's serial signed with token A's key, and B's PIN was
        /// sent to A.
        @Test func theSerialSelectsTheTokenItNamesAndItsKey() throws {
            let twins = try TwinTokens.make()
            let module = try SoftHSM.module.get()
            let uri = try PKCS11URI("pkcs11:token=\(twins.label);serial=\(twins.serial(twins.second));object=signing;type=private")
            let key = try module.privateKey(uri, pin: twins.pin(twins.second))
            let message = Array("release 1.2\n".utf8)
            let signature = try key.sign(message)
            #expect(try #require(twins.key(twins.second)).isValidSignature(signature, for: message), "B's public key verifies")
            #expect(try !#require(twins.key(twins.first)).isValidSignature(signature, for: message), "A's does not")
            #expect(try !TwinTokens.wrongPINReached(twins.first), "B's PIN never went to A")
        }

        /// Two tokens match: nothing is used, both are named with what tells them apart, and neither
        /// token saw a login (a wrong PIN would have set its count-low flag, as the control shows).
        @Test func aURIThatMatchesTwoTokensIsRefusedBeforeAnyLogin() throws {
            let twins = try TwinTokens.make()
            let module = try SoftHSM.module.get()
            let uri = try PKCS11URI("pkcs11:token=\(twins.label);object=signing")
            // The second token's PIN: sent to the first, it would be wrong there.
            let error = try #require(throws: PKCS11Error.ambiguousMatch) { try module.privateKey(uri, pin: twins.pin(twins.second)) }
            for slot in [twins.first, twins.second] {
                #expect(error.reason.contains(twins.serial(slot)) && error.reason.contains("slot \(slot.identifier)"), "\(error.reason)")
            }
            #expect(error.reason.contains("serial="), "names the attribute that tells them apart: \(error.reason)")
            #expect(!error.reason.contains("111111") && !error.reason.contains("222222"))
            #expect(try !TwinTokens.wrongPINReached(twins.first) && !TwinTokens.wrongPINReached(twins.second))

            // The control: a wrong PIN that does reach a token shows on it.
            let exact = try PKCS11URI("pkcs11:token=\(twins.label);serial=\(twins.serial(twins.first));object=signing")
            #expect(throws: PKCS11Error.pinIncorrect) { try module.privateKey(exact, pin: twins.pin(twins.second)) }
            #expect(try TwinTokens.wrongPINReached(twins.first) && !TwinTokens.wrongPINReached(twins.second))
        }

        /// Two keys on the token match: refused before the login, naming both ids.
        @Test func aURIThatMatchesTwoKeysIsRefusedBeforeLogin() throws {
            let module = try SoftHSM.module.get()
            let label = SoftHSM.uniqueLabel("keys")
            let free = try #require(try module.slots(withTokenOnly: false).first { $0.token?.isInitialized == false })
            let slot = try module.initializeToken(slot: free, label: label, securityOfficerPIN: SoftHSM.securityOfficerPIN, userPIN: SoftHSM.pin)
            do {
                let session = try module.openSession(slot: slot, pin: SoftHSM.pin)
                _ = try session.generateKeyPair(.p256, label: "k", id: [0x01])
                _ = try session.generateKeyPair(.p256, label: "k", id: [0x02])
            }
            let uri = try PKCS11URI("pkcs11:token=\(label);object=k")
            let error = try #require(throws: PKCS11Error.ambiguousMatch) { try module.privateKey(uri, pin: Array("000000".utf8)) }
            #expect(error.reason.contains("%01") && error.reason.contains("%02") && error.reason.contains("id="), "\(error.reason)")
            #expect(try !TwinTokens.wrongPINReached(slot), "the wrong PIN was never sent")
            // Named by its id as well, the key is the one.
            let one = try module.privateKey(try PKCS11URI("pkcs11:token=\(label);object=k;id=%02"), pin: SoftHSM.pin)
            #expect(one.id == [0x02])
        }

        /// A URI that matches no token names, for each token there is, the attribute that differs.
        @Test func aURIThatMatchesNoTokenSaysWhichAttributeDidNotMatch() throws {
            let twins = try TwinTokens.make()
            let module = try SoftHSM.module.get()
            let uri = try PKCS11URI("pkcs11:token=\(twins.label);serial=0000000000000000;object=signing")
            let error = try #require(throws: PKCS11Error.tokenNotFound) { try module.privateKey(uri, pin: twins.pin(twins.first)) }
            #expect(error.reason.contains("serial") && error.reason.contains(twins.serial(twins.first)) && error.reason.contains(twins.serial(twins.second)), "\(error.reason)")
            #expect(try !TwinTokens.wrongPINReached(twins.first))
        }

        /// Every RFC 7512 token, slot and library attribute narrows the match: the token's own value
        /// selects it, another value selects nothing (it used to be ignored).
        @Test func everyTokenSlotAndLibraryAttributeIsMatched() throws {
            let twins = try TwinTokens.make()
            let module = try SoftHSM.module.get()
            let slot = twins.second
            let token = try #require(slot.token)
            let library = module.library
            func encoded(_ text: String) -> String {
                text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
            }
            let base = "pkcs11:token=\(twins.label);serial=\(token.serialNumber);object=signing"
            let attributes: [(String, String, String)] = [
                ("manufacturer", encoded(token.manufacturer), "Someone%20Else"),
                ("model", encoded(token.model), "Other"),
                ("slot-id", "\(slot.identifier)", "\(slot.identifier &+ 1)"),
                ("slot-description", encoded(slot.description), "Other%20slot"),
                ("slot-manufacturer", encoded(slot.manufacturer), "Other"),
                ("library-manufacturer", encoded(library.manufacturer), "Other"),
                ("library-description", encoded(library.description), "Other"),
                ("library-version", "\(library.version)", "\(library.version.major &+ 1).\(library.version.minor)"),
            ]
            for (name, real, other) in attributes {
                let selected = try module.privateKey(try PKCS11URI(base + ";\(name)=\(real)"), pin: twins.pin(slot))
                #expect(selected.publicKey == twins.key(slot), "\(name)=\(real) selects the token")
                let refused = #expect(throws: PKCS11Error.tokenNotFound, "\(name)=\(other) selects nothing") {
                    try module.privateKey(try PKCS11URI(base + ";\(name)=\(other)"), pin: twins.pin(slot))
                }
                #expect(refused?.reason.contains(name) == true, "\(refused?.reason ?? "")")
            }
        }

        /// CK_TOKEN_INFO's text fields are blank-padded: a value is compared as padded to the field,
        /// so trailing blanks in the URI are padding, while a prefix, another case or a longer value
        /// is another token; a value longer than the field could match nothing, and is refused.
        @Test func fieldsAreComparedExactlyAsPadded() throws {
            let twins = try TwinTokens.make()
            let module = try SoftHSM.module.get()
            let serial = twins.serial(twins.first)
            let padded = try module.privateKey(try PKCS11URI("pkcs11:token=\(twins.label)%20%20;serial=\(serial);object=signing"), pin: twins.pin(twins.first))
            #expect(padded.publicKey == twins.key(twins.first))
            for label in [String(twins.label.dropLast()), twins.label.lowercased(), twins.label + "x"] {
                #expect(throws: PKCS11Error.tokenNotFound, "token=\(label)") {
                    try module.privateKey(try PKCS11URI("pkcs11:token=\(label);serial=\(serial);object=signing"), pin: twins.pin(twins.first))
                }
            }
            // A NUL would end the label as C reads it: refused as the URI is read, before any token is asked.
            #expect(throws: PKCS11Error.malformedURI) { try PKCS11URI("pkcs11:token=\(twins.label)%00;serial=\(serial);object=signing") }
            let tooLong = try #require(throws: PKCS11Error.malformedURI) { try PKCS11URI("pkcs11:token=\(String(repeating: "a", count: 33))") }
            #expect(tooLong.reason.contains("32"), "\(tooLong.reason)")
        }

        /// The public half is found without any login, by the same selection, and the URI returned
        /// names the key pair exactly (the token's serial, the key's id): what a keychain reference keeps.
        @Test func thePublicHalfIsFoundWithoutLoginAndNamedExactly() throws {
            let twins = try TwinTokens.make()
            let module = try SoftHSM.module.get()
            let found = try module.publicKey(try PKCS11URI("pkcs11:token=\(twins.label);serial=\(twins.serial(twins.second));object=signing"))
            #expect(found.verifyingKey == twins.key(twins.second) && found.type == .p256)
            #expect(found.uri.serial == twins.serial(twins.second) && found.uri.object == "signing" && found.uri.id?.count == 16 && found.uri.type == "private")
            #expect(throws: PKCS11Error.ambiguousMatch) { try module.publicKey(try PKCS11URI("pkcs11:token=\(twins.label);object=signing")) }
            let key = try module.privateKey(found.uri, pin: twins.pin(twins.second))
            #expect(key.publicKey == found.verifyingKey && key.uri == found.uri)
        }

        /// A URI's module-path and module-name are checked before the module is loaded (loading runs
        /// its code).
        @Test func aModuleTheURIRulesOutIsNotLoaded() throws {
            let module = try SoftHSM.module.get()
            let path = try #require(SoftHSM.modulePath)
            #expect(try PKCS11Module.load(path, for: PKCS11URI("pkcs11:?module-name=softhsm2")) === module)
            #expect(try PKCS11Module.load(path, for: PKCS11URI("pkcs11:?module-name=libsofthsm2&module-path=\(path)")) === module)
            for text in ["pkcs11:?module-name=opensc-pkcs11", "pkcs11:?module-name=softhsm", "pkcs11:?module-path=/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"] {
                let error = try #require(throws: PKCS11Error.moduleNotLoaded, "\(text)") { try PKCS11Module.load(path, for: PKCS11URI(text)) }
                #expect(error.reason.contains(path), "\(error.reason)")
            }
        }
    }
}
