import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Testing

/// Every signed example of RFC 9421 through our public API: the Signature-Input is parsed by our
/// parser, the base rebuilt from the message must equal the RFC's byte for byte, the RFC's signature must
/// verify with the RFC's key, and deterministic signatures (HMAC, Ed25519, RSA v1.5) must be reproduced.
@Suite("RFC 9421 vectors")
struct RFC9421VectorTests {
    /// B.2.4's printed response carries a wrong Content-Digest (Tests/Vectors/rfc9421/README.md, issue 1);
    /// its signature base uses the right one. Patches the message to carry the value the base shows.
    static func correctedMessage(_ vector: RFC9421.Case) throws -> HTTPSignedMessage {
        let message = try RFC9421.signedMessage(vector)
        guard vector.id == "B.2.4", case .response(var response, let request) = message else { return message }
        let line = try #require(vector.signatureBase.split(separator: "\n").first { $0.hasPrefix("\"content-digest\": ") })
        response.headerFields[.contentDigest] = String(line.dropFirst("\"content-digest\": ".count))
        return .response(response, request: request)
    }

    @Test(arguments: RFC9421.allCases)
    func baseMatchesTheRFCByteForByte(vector: RFC9421.Case) throws {
        let signature = try RFC9421.signature(vector)
        let base = try HTTPSignatureBase.make(for: Self.correctedMessage(vector), covering: signature.components, parameters: signature.parameters)
        let fileName = vector.id.replacingOccurrences(of: "/", with: "_")
        let expected = String(decoding: try RFC9421.file("signature-bases/\(fileName).txt"), as: UTF8.self)
        #expect(base == expected)
        #expect(base == vector.signatureBase)
    }

    @Test(arguments: RFC9421.allCases)
    func theRFCSignatureVerifies(vector: RFC9421.Case) throws {
        let signature = try RFC9421.signature(vector)
        #expect(signature.signature == (try Base64.decode(vector.signatureB64)))
        let algorithm = try RFC9421.algorithm(vector)
        let key = try RFC9421.verificationKey(vector.keyid, algorithm)
        let base = try HTTPSignatureBase.make(for: Self.correctedMessage(vector), covering: signature.components, parameters: signature.parameters)
        #expect(key.isValidSignature(signature.signature, for: base))
        var tampered = Array(base.utf8)
        tampered[tampered.count / 2] ^= 1
        #expect(!key.isValidSignature(signature.signature, for: String(decoding: tampered, as: UTF8.self)))
    }

    @Test(arguments: RFC9421.allCases.filter(\.deterministic))
    func deterministicSignaturesAreReproduced(vector: RFC9421.Case) throws {
        let algorithm = try RFC9421.algorithm(vector)
        let key = try RFC9421.signingKey(vector.keyid, algorithm)
        #expect(try key.signature(for: vector.signatureBase) == (try Base64.decode(vector.signatureB64)))
    }

    /// The RFC's B.2.4 response prints a Content-Digest that is not the body's; ours is the one the
    /// signature base uses.
    @Test func theB24ResponseDigestIsTheOneItsBaseUses() throws {
        let vector = try #require(RFC9421.vectors.appendixBCases.first { $0.id == "B.2.4" })
        let body = Array(try #require(RFC9421.vectors.messages[vector.message]).body.utf8)
        let computed = ContentDigest.fieldValue(for: body, algorithms: [.sha512])
        #expect(vector.signatureBase.contains("\"content-digest\": \(computed)\n"))
        guard case .response(let printed, _) = try RFC9421.signedMessage(vector) else {
            Issue.record("B.2.4 is a response")
            return
        }
        #expect(printed.headerFields[.contentDigest] != computed)
        #expect(throws: HTTPSignatureError.self) { try ContentDigest.check(printed.headerFields[.contentDigest] ?? "", body: body) }
    }

    /// Section 4.3: the client signs `sig1`; a proxy rewrites the authority and adds `proxy_sig`. At the
    /// origin `sig1` no longer verifies (its authority changed) and `proxy_sig` does: a verifier that
    /// considers every signature accepts the message through the second.
    @Test func aMessageWithTwoSignatures() async throws {
        let forwarded = try RFC9421.request("section-4.3-two-signatures-request")
        let client = try RFC9421.request("section-4.3-client-request")
        let body = Array(try #require(RFC9421.vectors.messages["section-4.3-client-request"]).body.utf8)
        let keys = HTTPStaticKeys([
            "test-key-ecc-p256": try RFC9421.verificationKey("test-key-ecc-p256", .ecdsaP256SHA256),
            "test-key-rsa": try RFC9421.verificationKey("test-key-rsa", .rsaV1_5SHA256),
        ])
        #expect(try HTTPSignatureFields.signatures(in: forwarded.headerFields).map(\.label) == ["sig1", "proxy_sig"])
        var policy = HTTPSignaturePolicy(requiring: [.method, .authority, .path])
        let now: Int64 = 1_618_884_480

        let either = try await HTTPMessageVerifier(policy: policy, keys: keys).verify(forwarded, body: body, now: now)
        #expect(either.label == "proxy_sig")
        #expect(either.algorithm == .rsaV1_5SHA256)

        policy.label = "sig1"
        let clientOnly = HTTPMessageVerifier(policy: policy, keys: keys)
        #expect(try await clientOnly.verify(client, body: body, now: now).keyID == "test-key-ecc-p256")
        await #expect(throws: HTTPSignatureError.badSignature) { try await clientOnly.verify(forwarded, body: body, now: now) }
    }

    /// B.4: the transformations that keep the covered components keep the signature valid; the others
    /// break it. Each variant is read from its raw HTTP/1.1 text.
    @Test(arguments: RFC9421.vectors.transformations.variants)
    func transformations(variant: RFC9421.Variant) async throws {
        let (request, body) = try RawHTTPRequest.parse(Array((variant.messageText + "\n\n").utf8))
        let keys = HTTPStaticKeys(["test-key-ed25519": try RFC9421.verificationKey("test-key-ed25519", .ed25519)])
        var policy = HTTPSignaturePolicy(requiring: [])
        policy.maximumAge = nil
        // No maximum age and no expires: such a signature has no end, which a replay cache refuses
        // (ReplayWindowTests). The vectors are about validity, so replay protection is off here.
        let verifier = HTTPMessageVerifier(policy: policy, keys: keys, replayCache: nil)
        do {
            let verified = try await verifier.verify(request, body: body, now: 1_618_884_473)
            #expect(variant.expectedValid, "verified although the RFC says it must not")
            #expect(verified.keyID == "test-key-ed25519")
        } catch {
            #expect(!variant.expectedValid, "refused: \(error)")
            #expect(error.code == .badSignature)
        }
    }
}
