import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import HTTPTypes
import Testing

/// Our signer against our verifier, with each algorithm, and every way a request must be refused.
@Suite("Signing and verifying requests")
struct SignAndVerifyTests {
    static let now: Int64 = 1_800_000_000
    static let body = Array(#"{"email":"ada@example.com","name":"Ada"}"#.utf8)

    static func request() -> HTTPRequest {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register_user?x=1")
        request.headerFields[.contentType] = "application/json"
        return request
    }

    static func keyPair(_ algorithm: HTTPSignatureAlgorithm) throws -> (HTTPSigningKey, HTTPVerificationKey) {
        let signing: HTTPSigningKey
        switch algorithm {
        case .hmacSHA256: signing = .hmacSHA256(secret: try MACKey.generate())
        case .ecdsaP256SHA256: signing = try HTTPSigningKey(SigningKey.generate(.p256))
        case .ecdsaP384SHA384: signing = try HTTPSigningKey(SigningKey.generate(.p384))
        case .ed25519: signing = try HTTPSigningKey(SigningKey.generate(.ed25519))
        case .rsaPSSSHA512, .rsaV1_5SHA256: signing = try HTTPSigningKey(RSAKeys.shared, algorithm: algorithm)
        }
        return (signing, signing.verificationKey)
    }

    /// One RSA key for every RSA test (generation is slow).
    enum RSAKeys {
        static let shared: SigningKey = {
            do { return try SigningKey.generate(.rsa2048) } catch { preconditionFailure("RSA key generation failed: \(error)") }
        }()
    }

    static func verifier(_ key: HTTPVerificationKey, policy: HTTPSignaturePolicy = HTTPSignaturePolicy(), cache: (any HTTPSignatureReplayCache)? = InMemoryReplayCache()) -> HTTPMessageVerifier {
        HTTPMessageVerifier(policy: policy, keys: HTTPStaticKeys(["app": key]), replayCache: cache)
    }

    @Test(arguments: HTTPSignatureAlgorithm.allCases)
    func signAndVerify(algorithm: HTTPSignatureAlgorithm) async throws {
        let (signing, verification) = try Self.keyPair(algorithm)
        var request = Self.request()
        let signature = try HTTPMessageSigner(key: signing, keyID: "app").sign(&request, body: Self.body, now: Self.now)
        #expect(signature.components == [.method, .targetURI, .field("content-digest"), .field("content-type")])
        #expect(request.headerFields[.contentDigest] == ContentDigest.fieldValue(for: Self.body))
        let inputField = try #require(request.headerFields[.signatureInput])
        #expect(inputField.hasPrefix("sig1=(\"@method\" \"@target-uri\" \"content-digest\" \"content-type\");created=1800000000;nonce=\""))
        #expect(inputField.hasSuffix(";alg=\"\(algorithm)\";keyid=\"app\""))
        let verified = try await Self.verifier(verification).verify(request, body: Self.body, now: Self.now + 5)
        #expect(verified.keyID == "app")
        #expect(verified.algorithm == algorithm)
    }

    static func refusal(
        _ verifier: HTTPMessageVerifier, _ request: HTTPRequest, body: [UInt8]? = body, now: Int64 = now
    ) async -> HTTPSignatureError.Code? {
        do {
            _ = try await verifier.verify(request, body: body, now: now)
            return nil
        } catch {
            return error.code
        }
    }

    /// An HMAC verification key keeps one keyed computation and continues a copy for each check: checks
    /// in any order, good and bad, must not leak into one another.
    @Test func oneHMACKeyChecksManyBasesIndependently() throws {
        let secret = try MACKey.generate()
        let signing = HTTPSigningKey.hmacSHA256(secret: secret)
        let verifying = HTTPVerificationKey.hmacSHA256(secret: secret)
        let bases = (0..<4).map { "\"@method\": POST\n\"@signature-params\": (\"@method\");created=\($0)" }
        let signatures = try bases.map { try signing.signature(for: $0) }
        for _ in 0..<2 {
            for (index, base) in bases.enumerated() {
                #expect(verifying.isValidSignature(signatures[index], for: base))
                #expect(!verifying.isValidSignature(signatures[(index + 1) % bases.count], for: base))
                #expect(!verifying.isValidSignature(Array(signatures[index].prefix(16)), for: base))
            }
        }
        #expect(!HTTPVerificationKey.hmacSHA256(secret: try MACKey.generate()).isValidSignature(signatures[0], for: bases[0]))
    }

    @Test func refusals() async throws {
        let (signing, verification) = try Self.keyPair(.ed25519)
        let signer = HTTPMessageSigner(key: signing, keyID: "app")
        var signed = Self.request()
        try signer.sign(&signed, body: Self.body, now: Self.now)
        let verifier = Self.verifier(verification)

        #expect(await Self.refusal(verifier, Self.request()) == .missingSignature)
        #expect(await Self.refusal(verifier, signed, now: Self.now + 331) == .expired)
        #expect(await Self.refusal(verifier, signed, now: Self.now - 31) == .createdInFuture)

        var tamperedHeader = signed
        tamperedHeader.headerFields[.contentType] = "text/plain"
        #expect(await Self.refusal(verifier, tamperedHeader) == .badSignature)
        var tamperedTarget = signed
        tamperedTarget.path = "/register_user?x=2"
        #expect(await Self.refusal(verifier, tamperedTarget) == .badSignature)
        var tamperedBody = Self.body
        tamperedBody[3] ^= 1
        #expect(await Self.refusal(verifier, signed, body: tamperedBody) == .digestMismatch)

        let (_, otherKey) = try Self.keyPair(.ed25519)
        #expect(await Self.refusal(Self.verifier(otherKey), signed) == .badSignature)
        let unknown = HTTPMessageVerifier(keys: HTTPStaticKeys(["someone-else": verification]))
        #expect(await Self.refusal(unknown, signed) == .unknownKey)
        let (_, hmacKey) = try Self.keyPair(.hmacSHA256)
        #expect(await Self.refusal(Self.verifier(hmacKey), signed) == .algorithmMismatch)

        var tagged = HTTPSignaturePolicy()
        tagged.tag = "coffer-app"
        #expect(await Self.refusal(Self.verifier(verification, policy: tagged), signed) == .tagMismatch)
        let strict = HTTPSignaturePolicy(requiring: [.method, .targetURI, .field("content-digest"), .authority])
        #expect(await Self.refusal(Self.verifier(verification, policy: strict), signed) == .componentNotCovered)

        // A body the signature does not cover.
        var noDigest = Self.request()
        var withoutBody = signer
        withoutBody.components = [.method, .targetURI]
        try withoutBody.sign(&noDigest, now: Self.now)
        #expect(await Self.refusal(verifier, noDigest) == .componentNotCovered)
        #expect(await Self.refusal(verifier, noDigest, body: nil) == nil)
    }

    @Test func anAlgParameterCannotSwitchTheKeysAlgorithm() async throws {
        // An RSA key registered for PSS; a v1.5 signature by the same key, honestly labelled, is refused.
        let pss = try HTTPSigningKey(RSAKeys.shared, algorithm: .rsaPSSSHA512)
        let v15 = try HTTPSigningKey(RSAKeys.shared, algorithm: .rsaV1_5SHA256)
        var request = Self.request()
        try HTTPMessageSigner(key: v15, keyID: "app").sign(&request, body: Self.body, now: Self.now)
        #expect(await Self.refusal(Self.verifier(pss.verificationKey), request) == .algorithmMismatch)
        // Without the alg parameter, the key's own algorithm is used, and the v1.5 signature fails.
        var unlabelled = Self.request()
        var signer = HTTPMessageSigner(key: v15, keyID: "app")
        signer.includesAlgorithm = false
        try signer.sign(&unlabelled, body: Self.body, now: Self.now)
        #expect(await Self.refusal(Self.verifier(pss.verificationKey), unlabelled) == .badSignature)
        #expect(throws: HTTPSignatureError.self) { try HTTPSigningKey(RSAKeys.shared) }
        #expect(throws: HTTPSignatureError.self) { try HTTPSigningKey(SigningKey.generate(.p256), algorithm: .ed25519) }
    }

    @Test func replaysAreRefusedWithinTheWindow() async throws {
        let (signing, verification) = try Self.keyPair(.hmacSHA256)
        let verifier = Self.verifier(verification)
        var request = Self.request()
        try HTTPMessageSigner(key: signing, keyID: "app").sign(&request, body: Self.body, now: Self.now)
        #expect(await Self.refusal(verifier, request) == nil)
        #expect(await Self.refusal(verifier, request, now: Self.now + 100) == .replayed)

        // Without a nonce the signature base identifies the request; a fresh signature is a new request.
        var signer = HTTPMessageSigner(key: signing, keyID: "app")
        signer.includesNonce = false
        var first = Self.request()
        try signer.sign(&first, body: Self.body, now: Self.now)
        #expect(await Self.refusal(verifier, first) == nil)
        #expect(await Self.refusal(verifier, first) == .replayed)
        var second = Self.request()
        try signer.sign(&second, body: Self.body, now: Self.now + 1)
        #expect(await Self.refusal(verifier, second, now: Self.now + 1) == nil)
    }

    /// ECDSA signatures can be re-randomized by anyone ((r, s) → (r, n − s)); the replay cache keys on the
    /// signed content, so such a copy is still a replay.
    @Test func aReRandomizedECDSASignatureIsStillAReplay() async throws {
        let (signing, verification) = try Self.keyPair(.ecdsaP256SHA256)
        var signer = HTTPMessageSigner(key: signing, keyID: "app")
        signer.includesNonce = false
        var request = Self.request()
        let signature = try signer.sign(&request, body: Self.body, now: Self.now)
        let verifier = Self.verifier(verification)
        #expect(await Self.refusal(verifier, request) == nil)

        // n − s for P-256, big-endian.
        let order = try Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        var s = Array(signature.signature[32...])
        var negated = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(order[index]) - Int(s[index]) - borrow
            negated[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        s = negated
        var copy = request
        copy.headerFields[.signature] = "sig1=:" + Base64.encode(Array(signature.signature[..<32]) + s) + ":"
        #expect(await Self.refusal(verifier, copy) == .replayed)
    }

    @Test func responsesAreSignedAndVerified() async throws {
        let (signing, verification) = try Self.keyPair(.ed25519)
        var request = Self.request()
        try HTTPMessageSigner(key: signing, keyID: "app").sign(&request, body: Self.body, now: Self.now)
        var response = HTTPResponse(status: .created)
        var signer = HTTPMessageSigner(key: signing, keyID: "app")
        signer.label = "res"
        signer.components = [.status, .field("content-digest"), HTTPSignatureComponent.field("signature", key: "sig1").fromRequest]
        try signer.sign(&response, answering: request, body: Array("{}".utf8), now: Self.now)
        let policy = HTTPSignaturePolicy(requiring: [.status])
        let verifier = Self.verifier(verification, policy: policy)
        #expect(try await verifier.verify(response, answering: request, body: Array("{}".utf8), now: Self.now).label == "res")
        var otherRequest = request
        otherRequest.headerFields[.signature] = "sig1=:AAAA:"
        await #expect(throws: HTTPSignatureError.badSignature) {
            try await verifier.verify(response, answering: otherRequest, body: Array("{}".utf8), now: Self.now)
        }
    }

    @Test func signaturesAddUpAndLabelsDoNotCollide() throws {
        let (first, _) = try Self.keyPair(.ed25519)
        let (second, _) = try Self.keyPair(.hmacSHA256)
        var request = Self.request()
        try HTTPMessageSigner(key: first, keyID: "a").sign(&request, now: Self.now)
        #expect(throws: HTTPSignatureError.self) { try HTTPMessageSigner(key: second, keyID: "b").sign(&request, now: Self.now) }
        var proxy = HTTPMessageSigner(key: second, keyID: "b")
        proxy.label = "proxy"
        try proxy.sign(&request, now: Self.now)
        #expect(try HTTPSignatureFields.signatures(in: request.headerFields).map(\.label) == ["sig1", "proxy"])
    }
}
