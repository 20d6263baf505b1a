import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferPKCS11
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Testing

/// A token key is a `MessageSigner` like a software `SigningKey`: Coffer signature files, OpenSSL-style
/// raw signatures and RFC 9421 requests made with it verify exactly as the software key's would.
extension SoftHSMTests {
    @Suite("Hardware keys are ordinary keys")
    struct HardwareKeysAreOrdinaryKeysTests {
        @Test(arguments: [PKCS11KeyType.p256, .p384, .rsa(bits: 2048), .ed25519])
        func signatureFilesMadeOnTheTokenVerify(type: PKCS11KeyType) throws {
            let key = try SoftHSM.session().generateKeyPair(type, label: SoftHSM.uniqueLabel("file"))
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
        }

        /// What `coffer sign --raw` writes (the SHA-512 digest signed as OpenSSL signs it) verifies with
        /// `openssl dgst -sha512 -verify`.
        @Test(.enabled(if: haveOpenSSL), arguments: [PKCS11KeyType.p256, .rsa(bits: 2048)])
        func rawSignaturesVerifyWithOpenSSL(type: PKCS11KeyType) async throws {
            let key = try SoftHSM.session().generateKeyPair(type, label: SoftHSM.uniqueLabel("raw"))
            let message = Array("release 1.2\n".utf8)
            let signature = try key.signature(for: message, options: SignatureOptions(hash: .sha512))
            let folder = try TemporaryDirectory()
            try folder.write(key.verifyingKey.pemRepresentation + "\n", to: "key.pub")
            try folder.write(message, to: "message")
            try folder.write(signature, to: "signature")
            let result = try await CommandRunner.run("openssl", ["dgst", "-sha512", "-verify", folder.path("key.pub"), "-signature", folder.path("signature"), folder.path("message")])
            #expect(result.status == 0 && result.output.contains("Verified OK"), "\(result.output)\(result.standardError)")
        }

        @Test(arguments: [(PKCS11KeyType.p256, HTTPSignatureAlgorithm?.none), (.p384, nil), (.rsa(bits: 2048), .rsaPSSSHA512), (.rsa(bits: 2048), .rsaV1_5SHA256), (.ed25519, nil)])
        func httpRequestsSignedOnTheTokenVerify(type: PKCS11KeyType, algorithm: HTTPSignatureAlgorithm?) async throws {
            let key = try SoftHSM.session().generateKeyPair(type, label: SoftHSM.uniqueLabel("http"))
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
    }
}
