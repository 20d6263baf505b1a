import CofferCore
import CofferCrypto
import CofferFormats
@testable import CofferPKCS11
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

let haveOpenSSL = CommandRunner.isAvailable("openssl")
let havePKCS11Tool = CommandRunner.isAvailable("pkcs11-tool")

/// Keys made on a real PKCS #11 token (SoftHSM2) sign, verify with OpenSSL and with Coffer's verifier,
/// cannot be read out, are seen by an independent client (OpenSC's pkcs11-tool) and the reverse, and
/// every failure is a typed error naming the function and the token.
extension SoftHSMTests {
    @Suite("PKCS #11 tokens (SoftHSM2)")
    struct PKCS11TokenTests {
        /// OpenSSL checks a signature the token made, with the public key Coffer read from the token.
        static func opensslVerifies(_ signature: [UInt8], of message: [UInt8], by key: PKCS11PrivateKey, options: [String]) async throws -> Bool {
            let folder = try TemporaryDirectory()
            try folder.write(key.publicKey.pemRepresentation + "\n", to: "key.pub")
            try folder.write(message, to: "message")
            try folder.write(signature, to: "signature")
            let result = try await CommandRunner.run(
                "openssl", ["dgst", "-sha256", "-verify", folder.path("key.pub"), "-signature", folder.path("signature")] + options + [folder.path("message")]
            )
            return result.status == 0 && result.output.contains("Verified OK")
        }

        /// OpenSSL checks an Ed25519 signature the token made over the message itself (`pkeyutl -rawin`).
        static func opensslVerifiesEd25519(_ signature: [UInt8], of message: [UInt8], by key: PKCS11PrivateKey) async throws -> Bool {
            let folder = try TemporaryDirectory()
            try folder.write(key.publicKey.pemRepresentation + "\n", to: "key.pub")
            try folder.write(message, to: "message")
            try folder.write(signature, to: "signature")
            let result = try await CommandRunner.run(
                "openssl", ["pkeyutl", "-verify", "-pubin", "-inkey", folder.path("key.pub"), "-rawin", "-in", folder.path("message"), "-sigfile", folder.path("signature")]
            )
            return result.status == 0 && result.output.contains("Signature Verified Successfully")
        }

        @Test(arguments: [PKCS11KeyType.p256, .p384, .rsa(bits: 2048), .ed25519])
        func keysMadeOnTheTokenSignAndEveryoneVerifies(type: PKCS11KeyType) async throws {
            let session = try SoftHSM.session()
            let key = try session.generateKeyPair(type, label: SoftHSM.uniqueLabel("sign"))
            #expect(key.type == type)
            let message = Array("release 1.2\n".utf8)
            let signature = try key.sign(message)
            #expect(key.publicKey.isValidSignature(signature, for: message), "Coffer's verifier")
            #expect(!key.publicKey.isValidSignature(signature, for: Array("release 1.3\n".utf8)))
            if haveOpenSSL, type == .ed25519 {
                #expect(signature.count == 64)
                await #expect(try Self.opensslVerifiesEd25519(signature, of: message, by: key), "openssl pkeyutl -verify -rawin")
            } else if haveOpenSSL {
                // OpenSSL digests with SHA-256 here; Coffer's defaults are SHA-384 for P-384 and SHA-512 for RSA.
                let forOpenSSL = type == .p256 ? signature : try key.sign(message, hash: .sha256)
                await #expect(try Self.opensslVerifies(forOpenSSL, of: message, by: key, options: []), "openssl dgst -verify")
            }
            if case .rsa = type {
                let pss = try key.sign(message, hash: .sha256, padding: .pss)
                #expect(key.publicKey.isValidSignature(pss, for: message, options: SignatureOptions(hash: .sha256, rsaPadding: .pss)))
                if haveOpenSSL {
                    await #expect(try Self.opensslVerifies(pss, of: message, by: key, options: ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]))
                }
            }
        }

        @Test(arguments: [PKCS11KeyType.p256, .ed25519])
        func theTokenNeverRevealsThePrivateKey(type: PKCS11KeyType) throws {
            let session = try SoftHSM.session()
            let key = try session.generateKeyPair(type, label: SoftHSM.uniqueLabel("sensitive"))
            #expect(try key.isNonExtractable, "CKA_SENSITIVE true and CKA_EXTRACTABLE false")
            #expect(try key.canSign)
            // Found again by label, the same key: its public half is what the token holds.
            let found = try session.privateKey(label: key.label)
            #expect(found.publicKey == key.publicKey && found.id == key.id)
        }

        @Test func aWrongPINIsRefusedNamingTheFunctionAndTheToken() throws {
            let module = try SoftHSM.module.get()
            // Login is per application: log out first by closing every session is not possible here, so use
            // a fresh token the process has not logged in to.
            let error = try #require(throws: PKCS11Error.tokenNotFound) {
                _ = try module.openSession(tokenLabel: "no-such-token", pin: SoftHSM.pin)
            }
            #expect(error.reason.contains("'no-such-token'") && error.reason.contains("'\(SoftHSM.tokenLabel)'"), "\(error.reason)")
        }

        @Test(.enabled(if: havePKCS11Tool, "needs OpenSC's pkcs11-tool"))
        func aWrongPINIsAPINError() throws {
            // A second token, logged in to by nobody in this process yet.
            let module = try SoftHSM.module.get()
            let label = SoftHSM.uniqueLabel("pin")
            let slot = try #require(try module.slots(withTokenOnly: false).first { $0.token?.isInitialized == false })
            try module.initializeToken(slot: slot, label: label, securityOfficerPIN: SoftHSM.securityOfficerPIN, userPIN: SoftHSM.pin)
            let error = try #require(throws: PKCS11Error.pinIncorrect) {
                _ = try module.openSession(tokenLabel: label, pin: Array("000000".utf8))
            }
            #expect(error.function == "C_Login", "\(error.reason)")
            #expect(error.reason == "C_Login failed on token '\(label)': CKR_PIN_INCORRECT")
            #expect(!error.reason.contains("000000") && !error.reason.contains("123456"))
        }

        /// Tokens may share a label: each is initialised with its own PINs, and none receives another's.
        /// (The security officer's PIN was sent to whichever token of the label enumerated first.)
        @Test func tokensOfOneLabelAreEachInitialisedWithTheirOwnPINs() throws {
            let module = try SoftHSM.module.get()
            let label = SoftHSM.uniqueLabel("same")
            for index in 1...3 {
                let free = try #require(try module.slots(withTokenOnly: false).first { $0.token?.isInitialized == false })
                try module.initializeToken(slot: free, label: label, securityOfficerPIN: Array("so-\(index)".utf8), userPIN: Array("pin-\(index)".utf8))
            }
            let tokens = try module.slots().filter { $0.token?.label == label }
            #expect(tokens.count == 3 && Set(tokens.compactMap { $0.token?.serialNumber }).count == 3)
            // Exactly one of the three user PINs opens each token.
            for slot in tokens {
                let opening = (1...3).filter { index in (try? module.openSession(slot: slot, pin: Array("pin-\(index)".utf8))) != nil }
                #expect(opening.count == 1, "token \(slot.token?.serialNumber ?? "") opens with PINs \(opening)")
            }
        }

        @Test func notAModuleAndNoFileAreTypedErrors() throws {
            #expect(throws: PKCS11Error.moduleNotLoaded) { try PKCS11Module.load("/nonexistent/libpkcs11.so") }
            let libc = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/libSystem.B.dylib"].first { FileManager.default.fileExists(atPath: $0) }
            if let libc {
                let notModule = try #require(throws: PKCS11Error.moduleNotLoaded) { try PKCS11Module.load(libc) }
                #expect(notModule.reason.contains("C_GetFunctionList"), "\(notModule.reason)")
            }
        }

        /// pkcs11-tool (OpenSC) lists what Coffer made, Coffer signs with what pkcs11-tool made, and a key
        /// removed behind Coffer's back, or one that may not sign, is a clear error.
        @Test(.enabled(if: havePKCS11Tool, "needs OpenSC's pkcs11-tool"))
        func anIndependentClientSeesTheSameKeys() async throws {
            let modulePath = try #require(SoftHSM.modulePath)
            let session = try SoftHSM.session()
            let ours = try session.generateKeyPair(.p256, label: SoftHSM.uniqueLabel("ours"))
            let tool = ["--module", modulePath, "--token-label", SoftHSM.tokenLabel, "--login", "--pin", String(decoding: SoftHSM.pin, as: UTF8.self)]
            let listed = try await CommandRunner.run("pkcs11-tool", tool + ["--list-objects", "--type", "privkey"], environment: SoftHSM.environment)
            #expect(listed.output.contains(ours.label) && listed.output.contains("Private Key Object; EC"), "\(listed.output)\(listed.standardError)")

            let theirs = SoftHSM.uniqueLabel("theirs")
            let made = try await CommandRunner.run(
                "pkcs11-tool", tool + ["--keypairgen", "--key-type", "EC:prime256v1", "--label", theirs, "--id", "c0ffee01", "--usage-sign"], environment: SoftHSM.environment
            )
            #expect(made.status == 0, "\(made.standardError)")
            let key = try session.privateKey(label: theirs)
            #expect(key.id == [0xC0, 0xFF, 0xEE, 0x01])
            let message = Array("signed with their key".utf8)
            #expect(key.publicKey.isValidSignature(try key.sign(message), for: message))

            // A key that may not sign (CKA_SIGN false).
            let cannot = try session.generateKeyPair(.p256, label: SoftHSM.uniqueLabel("derive"), id: nil, allowingSigning: false)
            #expect(try !cannot.canSign)
            let refused = try #require(throws: PKCS11Error.notPermitted) { try cannot.sign(message) }
            #expect(refused.function == "C_SignInit", "\(refused.reason)")

            // Removed behind Coffer's back.
            let removed = try await CommandRunner.run("pkcs11-tool", tool + ["--delete-object", "--type", "privkey", "--label", theirs], environment: SoftHSM.environment)
            #expect(removed.status == 0, "\(removed.standardError)")
            let gone = try #require(throws: PKCS11Error.self) { try key.sign(message) }
            #expect(gone.code == .keyNotFound || gone.code == .moduleFailure, "\(gone.reason)")
            let lookup = try #require(throws: PKCS11Error.keyNotFound) { try session.privateKey(label: theirs) }
            #expect(lookup.reason.contains(theirs))
        }

        /// An Ed25519 key each side made is used by the other: pkcs11-tool names the curve as the
        /// PrintableString "edwards25519", Coffer as the OID id-Ed25519; both are Ed25519.
        @Test(.enabled(if: havePKCS11Tool, "needs OpenSC's pkcs11-tool"))
        func ed25519KeysCrossBetweenCofferAndAnIndependentClient() async throws {
            let modulePath = try #require(SoftHSM.modulePath)
            let session = try SoftHSM.session()
            let tool = ["--module", modulePath, "--token-label", SoftHSM.tokenLabel, "--login", "--pin", String(decoding: SoftHSM.pin, as: UTF8.self)]
            let ours = try session.generateKeyPair(.ed25519, label: SoftHSM.uniqueLabel("ed-ours"))
            let listed = try await CommandRunner.run("pkcs11-tool", tool + ["--list-objects", "--type", "pubkey", "--label", ours.label], environment: SoftHSM.environment)
            #expect(listed.output.contains("EC_EDWARDS"), "\(listed.output)\(listed.standardError)")

            let theirs = SoftHSM.uniqueLabel("ed-theirs")
            let made = try await CommandRunner.run(
                "pkcs11-tool", tool + ["--keypairgen", "--key-type", "EC:edwards25519", "--label", theirs, "--id", "c0ffee02"], environment: SoftHSM.environment
            )
            #expect(made.status == 0, "\(made.standardError)")
            let key = try session.privateKey(label: theirs)
            #expect(key.type == .ed25519)
            let message = Array("signed with their Ed25519 key".utf8)
            let signature = try key.sign(message)
            #expect(key.publicKey.isValidSignature(signature, for: message))
            #expect(!key.publicKey.isValidSignature(signature, for: Array("another message".utf8)))
        }

        @Test func aKeysURINamesIt() throws {
            let session = try SoftHSM.session()
            let key = try session.generateKeyPair(.p256, label: "uri key/1", id: [0x01, 0xA0])
            let uri = key.uri
            let token = try #require(session.slot.token)
            #expect(uri.description == "pkcs11:token=\(SoftHSM.tokenLabel);manufacturer=SoftHSM%20project;model=SoftHSM%20v2;serial=\(token.serialNumber);object=uri%20key%2F1;id=%01%A0;type=private")
            let parsed = try PKCS11URI(uri.description)
            #expect(try session.privateKey(label: parsed.object, id: parsed.id).publicKey == key.publicKey)
            // The module opens it from the URI alone (as an app does with a keychain reference), and the
            // public half is readable without logging in.
            #expect(try SoftHSM.module.get().privateKey(parsed, pin: SoftHSM.pin).publicKey == key.publicKey)
            #expect(try SoftHSM.module.get().openSession(tokenLabel: SoftHSM.tokenLabel, pin: nil).publicKey(label: key.label) == key.publicKey)
        }
    }
}
