import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
@testable import CofferKeychain
@testable import CofferPKCS11
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Testing

/// A token key is a `SigningKey` like a software key (`SigningKey(tokenKey)`): every API that takes a
/// `SigningKey` signs on the token, and what it makes verifies with the ordinary software verifier (and
/// OpenSSL) exactly as the software key's would. Only exporting the private key is refused, typed.
extension SoftHSMTests {
    @Suite("Hardware keys are ordinary keys")
    struct HardwareKeysAreOrdinaryKeysTests {
        static let types: [PKCS11KeyType] = [.p256, .p384, .rsa(bits: 2048), .ed25519]

        /// A new key on the test token, as a `SigningKey`.
        static func tokenKey(_ type: PKCS11KeyType, _ label: String) throws -> SigningKey {
            try SigningKey(SoftHSM.session().generateKeyPair(type, label: SoftHSM.uniqueLabel(label)))
        }

        @Test(arguments: types)
        func signatureFilesMadeOnTheTokenVerify(type: PKCS11KeyType) throws {
            let key = try Self.tokenKey(type, "file")
            #expect(key.isCustom)
            let digest = DigestAlgorithm.sha512.hash(Array("release 1.2\n".utf8))
            let file = try SignatureFile.sign(digest: digest, with: key, comment: "file:app-1.2.tar.gz")
            guard case .valid(let comment) = file.verify(digest: digest, with: key.verifyingKey) else {
                Issue.record("a signature file made on the token does not verify")
                return
            }
            #expect(comment == "file:app-1.2.tar.gz")
            // The text form reads back and still verifies; another file's digest does not.
            let reread = try SignatureFile(parsing: file.armored)
            guard case .valid = reread.verify(digest: digest, with: key.verifyingKey) else {
                Issue.record("the written signature file does not verify")
                return
            }
            guard case .invalid = reread.verify(digest: DigestAlgorithm.sha512.hash(Array("release 1.3\n".utf8)), with: key.verifyingKey) else {
                Issue.record("a signature verified for other bytes")
                return
            }
            // A file on disk, hashed in a stream, signed on the token.
            let folder = try TemporaryDirectory()
            try folder.write(Array("release 1.2\n".utf8), to: "app.tar")
            let fromDisk = try SignatureFile.sign(fileAtPath: folder.path("app.tar"), with: key, comment: "c")
            guard case .valid = try fromDisk.verify(fileAtPath: folder.path("app.tar"), with: key.verifyingKey) else {
                Issue.record("a signature file of a file on disk made on the token does not verify")
                return
            }
        }

        /// Every signing method of `SigningKey` signs on the token; the software verifier checks each,
        /// and refuses each for other bytes.
        @Test(arguments: types)
        func everySigningMethodSignsOnTheToken(type: PKCS11KeyType) throws {
            let key = try Self.tokenKey(type, "forms")
            let publicKey = key.verifyingKey
            let message = Array("release 1.2\n".utf8)
            let other = Array("release 1.3\n".utf8)

            let whole = try key.signature(for: message)
            #expect(publicKey.isValidSignature(whole, for: message))
            #expect(!publicKey.isValidSignature(whole, for: other))

            for hash in DigestValue.signableAlgorithms {
                let options = SignatureOptions(hash: hash, rsaPadding: .pss, ecdsaEncoding: .raw)
                let digest = hash.hash(message)
                let signed = try key.signature(for: digest, options: options)
                #expect(publicKey.isValidSignature(signed, for: digest, options: options), "\(hash)")
                #expect(!publicKey.isValidSignature(signed, for: hash.hash(other), options: options))
            }

            let ofDigest = try key.signature(forDigestOf: message)
            #expect(publicKey.isValidSignature(ofDigest, forDigestOf: message))
            #expect(!publicKey.isValidSignature(ofDigest, forDigestOf: other))

            let folder = try TemporaryDirectory()
            try folder.write(message, to: "app.tar")
            let ofFile = try key.signature(forDigestOfFileAtPath: folder.path("app.tar"))
            #expect(try publicKey.isValidSignature(ofFile, forDigestOfFileAtPath: folder.path("app.tar")))
            #expect(publicKey.isValidSignature(ofFile, forDigestOf: message), "the file form is the digest form of the file's bytes")
        }

        /// What `coffer sign --raw` writes (the SHA-512 digest signed as OpenSSL signs it) verifies with
        /// `openssl dgst -sha512 -verify`.
        @Test(.enabled(if: haveOpenSSL), arguments: [PKCS11KeyType.p256, .rsa(bits: 2048)])
        func rawSignaturesVerifyWithOpenSSL(type: PKCS11KeyType) async throws {
            let key = try Self.tokenKey(type, "raw")
            let message = Array("release 1.2\n".utf8)
            let fromMessage = try key.signature(for: message, options: SignatureOptions(hash: .sha512))
            let fromDigest = try key.signature(for: DigestAlgorithm.sha512.hash(message), options: SignatureOptions())
            let folder = try TemporaryDirectory()
            try folder.write(key.verifyingKey.pemRepresentation + "\n", to: "key.pub")
            try folder.write(message, to: "message")
            for signature in [fromMessage, fromDigest] {
                try folder.write(signature, to: "signature")
                let result = try await CommandRunner.run("openssl", ["dgst", "-sha512", "-verify", folder.path("key.pub"), "-signature", folder.path("signature"), folder.path("message")])
                #expect(result.status == 0 && result.output.contains("Verified OK"), "\(result.output)\(result.standardError)")
            }
        }

        @Test(arguments: [(PKCS11KeyType.p256, HTTPSignatureAlgorithm?.none), (.p384, nil), (.rsa(bits: 2048), .rsaPSSSHA512), (.rsa(bits: 2048), .rsaV1_5SHA256), (.ed25519, nil)])
        func httpRequestsSignedOnTheTokenVerify(type: PKCS11KeyType, algorithm: HTTPSignatureAlgorithm?) async throws {
            let key = try Self.tokenKey(type, "http")
            let signing = try HTTPSigningKey(key, algorithm: algorithm)
            var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user")
            request.headerFields[.contentType] = "application/json"
            let body = Array(#"{"name":"Ada"}"#.utf8)
            let now: Int64 = 1_800_000_000
            _ = try HTTPMessageSigner(key: signing, keyID: "device").sign(&request, body: body, now: now)
            let verifier = HTTPMessageVerifier(keys: HTTPStaticKeys(["device": signing.verificationKey]))
            let verified = try await verifier.verify(request, body: body, now: now + 1)
            #expect(verified.keyID == "device" && verified.algorithm == signing.algorithm)
            // A changed body is refused.
            await #expect(throws: HTTPSignatureError.self) { try await verifier.verify(request, body: Array("{}".utf8), now: now + 1) }
        }

        /// A keychain export signed by a token key carries a proof its public half verifies.
        @Test(arguments: [PKCS11KeyType.p256, .ed25519])
        func keychainExportsAreSignedOnTheToken(type: PKCS11KeyType) throws {
            let key = try Self.tokenKey(type, "export")
            let item = ExportedItem(item: KeychainItem.genericPassword(service: "svc", account: "a"), secret: Array("hi".utf8))
            let document = try ExportDocument.encode([item], signedBy: key, audience: [])
            let proof = try #require(try ExportDocument.read(document).proof)
            #expect(proof.signer == key.verifyingKey)
            #expect(key.verifyingKey.isValidSignature(proof.signature, for: proof.signedBytes))
        }

        /// Every way out for the private key is a typed refusal that says why: never a crash, never an
        /// empty result. (The token would refuse too: its keys are made sensitive and not extractable.)
        @Test func aTokenKeyIsNeverExported() throws {
            let key = try Self.tokenKey(.p256, "export-refused")
            for format in [KeyFormat.pkcs8, .sec1, .jwk, .appleExternal] {
                let error = #expect(throws: CofferFormatsError.self) { try key.representation(as: format) }
                #expect(error?.code == .keyNotExportable && error?.reason.contains("held outside Coffer") == true, "\(format): \(error?.reason ?? "")")
            }
            for refused in [
                refusal { try key.pemRepresentation }, refusal { try key.sec1DERRepresentation }, refusal { try key.jwkRepresentation },
                refusal { try key.rawRepresentation }, refusal { try key.appleExternalRepresentation },
                refusal { try key.encryptedPKCS8Representation(password: Array("pw".utf8)) },
            ] {
                #expect(refused?.code == .keyNotExportable, "\(refused?.reason ?? "no error")")
            }
            let der = #expect(throws: CofferCryptoError.self) { try key.pkcs8DERRepresentation }
            #expect(der?.code == .keyNotExportable)
            let rsa = try Self.tokenKey(.rsa(bits: 2048), "export-refused")
            #expect(refusal { try rsa.pkcs1DERRepresentation }?.code == .keyNotExportable)
        }

        /// The error `body` threw, when it is a `CofferFormatsError`.
        func refusal(_ body: () throws -> Any) -> CofferFormatsError? {
            do {
                _ = try body()
                return nil
            } catch {
                return error as? CofferFormatsError
            }
        }

        /// The key is gone from the token between two signatures (the token removed, the key deleted):
        /// signing fails with a typed error carrying the token's own, and returns nothing.
        @Test func aKeyThatLeavesTheTokenFailsTyped() throws {
            let tokenKey = try SoftHSM.session().generateKeyPair(.p256, label: SoftHSM.uniqueLabel("vanish"))
            let key = try SigningKey(tokenKey)
            _ = try key.signature(for: Array("before".utf8))
            try tokenKey.session.call("C_DestroyObject") { $0.C_DestroyObject?(tokenKey.session.handle, tokenKey.handle) }
            let error = #expect(throws: CofferCryptoError.self) { try key.signature(for: Array("after".utf8)) }
            #expect(error?.code == .customKeyFailed, "\(error?.reason ?? "")")
            let underlying = try #require(error?.underlying as? PKCS11Error)
            #expect(underlying.function == "C_SignInit" && underlying.code == .keyNotFound, "\(underlying.reason)")
            #expect(throws: CofferFormatsError.self) {
                try SignatureFile.sign(digest: DigestAlgorithm.sha512.hash([1]), with: key, comment: "c")
            }
        }
    }
}
