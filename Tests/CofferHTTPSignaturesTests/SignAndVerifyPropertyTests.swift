import CofferCrypto
import CofferHTTPSignatures
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import PropertyBased
import Testing

/// RFC 9421 signing and verifying on random requests: any method, path, query, header fields (repeated
/// ones and values with surrounding spaces included), body and algorithm. A signed request verifies as
/// built, and again after a trip through raw HTTP/1.1 bytes and `RawHTTPRequest`; changing anything it
/// covers makes it fail with the reason that names the change.
@Suite("Signing and verifying requests: properties")
struct SignAndVerifyPropertyTests {
    static let now: Int64 = 1_800_000_000

    /// A request as a client would send it.
    struct Message: CustomStringConvertible {
        var request: HTTPRequest
        var body: [UInt8]?
        var description: String {
            "\(request.method) \(request.authority ?? "")\(request.path ?? "") fields \(request.headerFields.map { "\($0.name): \($0.value)" }) body \(body?.count ?? -1)"
        }
    }

    static let unreserved = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
    static let fieldCharacters = Array("abcdefghijklmnopqrstuvwxyz0123456789 !#$%&'*+-.^_`|~\"(),/:;<=>?@[\\]{}")

    static let messages = Generator { rng in
        func word(_ alphabet: [Character], _ lengths: ClosedRange<Int>) -> String {
            var text = String((0..<Int.random(in: lengths, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
            if Int.random(in: 0..<4, using: &rng) == 0 { text += "%2F" }  // percent-encoded bytes stay as they are
            return text
        }
        let method = [HTTPRequest.Method.get, .post, .put, .patch, .delete].randomElement(using: &rng) ?? .post
        var path = (0..<Int.random(in: 0...3, using: &rng)).map { _ in "/" + word(unreserved, 1...12) }.joined()
        if path.isEmpty { path = "/" }
        let parameters = Int.random(in: 0...3, using: &rng)
        if parameters > 0 { path += "?" + (0..<parameters).map { _ in word(unreserved, 1...6) + "=" + word(unreserved, 0...8) }.joined(separator: "&") }
        let authority = Bool.random(using: &rng) ? "api.example" : "api.example:8443"
        var request = HTTPRequest(method: method, scheme: "https", authority: authority, path: path)
        for index in 0..<Int.random(in: 0...4, using: &rng) {
            guard let name = HTTPField.Name("x-field-\(index)") else { continue }
            // Values keep visible characters inside; a parser trims surrounding spaces, and so does the base.
            let value = word(fieldCharacters, 1...30).trimmingCharacters(in: .whitespaces)
            request.headerFields.append(HTTPField(name: name, value: value.isEmpty ? "v" : value))
            if Int.random(in: 0..<4, using: &rng) == 0 { request.headerFields.append(HTTPField(name: name, value: "again \(index)")) }
        }
        let body: [UInt8]? = [.get, .delete].contains(method) ? nil : rng.bytes(count: Int.random(in: 0...2_000, using: &rng))
        return Message(request: request, body: body)
    }

    static let keys = Generator { rng in
        let seed = rng.bytes(count: SeededKeys.seedLength)
        switch HTTPSignatureAlgorithm.allCases.randomElement(using: &rng) ?? .ed25519 {
        case .hmacSHA256: return (try? MACKey(bytes: seed.prefix(32))).map { HTTPSigningKey.hmacSHA256(secret: $0) }
        case .ecdsaP256SHA256: return try? HTTPSigningKey(SeededKeys.key(.p256, seed: seed))
        case .ecdsaP384SHA384: return try? HTTPSigningKey(SeededKeys.key(.p384, seed: seed))
        case .ed25519: return try? HTTPSigningKey(SeededKeys.key(.ed25519, seed: seed))
        case .rsaPSSSHA512: return try? HTTPSigningKey(SeededKeys.key(.rsa2048, seed: seed), algorithm: .rsaPSSSHA512)
        case .rsaV1_5SHA256: return try? HTTPSigningKey(SeededKeys.key(.rsa2048, seed: seed), algorithm: .rsaV1_5SHA256)
        }
    }.compactMap { $0 }

    /// Every component of the message: method, target URI, authority, path, query when there is one,
    /// Content-Digest when there is a body, and each header field.
    static func components(of message: Message) -> [HTTPSignatureComponent] {
        var components: [HTTPSignatureComponent] = [.method, .targetURI, .authority, .path]
        if message.request.path?.contains("?") == true { components.append(.query) }
        if message.body != nil { components.append(.field("content-digest")) }
        var seen = Set<String>()
        for field in message.request.headerFields where seen.insert(field.name.canonicalName).inserted && field.name.canonicalName.hasPrefix("x-field") {
            components.append(.field(field.name.canonicalName))
        }
        return components
    }

    /// The request as HTTP/1.1 bytes on the wire.
    static func wire(_ request: HTTPRequest, body: [UInt8]?) -> [UInt8] {
        var text = "\(request.method.rawValue) \(request.path ?? "/") HTTP/1.1\r\nHost: \(request.authority ?? "")\r\n"
        for field in request.headerFields { text += "\(field.name.rawName):  \(field.value) \r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        return Array((text + "\r\n").utf8) + (body ?? [])
    }

    /// Why a fresh verifier (its own replay cache) refuses the request a second after signing, or nil.
    static func refusal(_ request: HTTPRequest, body: [UInt8]?, key: HTTPVerificationKey) async -> HTTPSignatureError.Code? {
        await SignAndVerifyTests.refusal(SignAndVerifyTests.verifier(key), request, body: body, now: now + 1)
    }

    @Test func signedRequestsVerifyAsBuiltAndAfterTheWire() async throws {
        await propertyCheck(count: 80, input: Self.messages, Self.keys) { message, key in
            var signer = HTTPMessageSigner(key: key, keyID: "app")
            signer.components = Self.components(of: message)
            var request = message.request
            try signer.sign(&request, body: message.body, now: Self.now)
            #expect(await Self.refusal(request, body: message.body, key: key.verificationKey) == nil, "as built")

            let parsed = try RawHTTPRequest.parse(Self.wire(request, body: message.body))
            #expect(await Self.refusal(parsed.request, body: message.body == nil ? nil : parsed.body, key: key.verificationKey) == nil, "after the wire")
        }
    }

    @Test func changingAnyCoveredPartIsRefused() async throws {
        await propertyCheck(count: 80, input: Self.messages, Self.keys, Gen.int(in: 0...Int.max)) { message, key, choice in
            var signer = HTTPMessageSigner(key: key, keyID: "app")
            signer.components = Self.components(of: message)
            var signed = message.request
            try signer.sign(&signed, body: message.body, now: Self.now)
            let verification = key.verificationKey

            var other = signed
            other.method = signed.method == .put ? .post : .put
            #expect(await Self.refusal(other, body: message.body, key: verification) == .badSignature, "method")

            other = signed
            other.path = (signed.path ?? "/") + (signed.path?.contains("?") == true ? "&x=1" : "x")
            #expect(await Self.refusal(other, body: message.body, key: verification) == .badSignature, "path or query")

            other = signed
            other.authority = "api.example.org"
            #expect(await Self.refusal(other, body: message.body, key: verification) == .badSignature, "authority")

            let covered = signed.headerFields.enumerated().filter { $0.element.name.canonicalName.hasPrefix("x-field") }
            if !covered.isEmpty {
                let (index, field) = covered[choice % covered.count]
                other = signed
                other.headerFields[index] = HTTPField(name: field.name, value: field.value + "!")
                #expect(await Self.refusal(other, body: message.body, key: verification) == .badSignature, "field \(field.name)")
                other = signed
                other.headerFields.remove(at: index)
                #expect(await Self.refusal(other, body: message.body, key: verification) != nil, "field \(field.name) removed")
            }

            if var body = message.body {
                body.append(UInt8(choice & 0xff))
                #expect(await Self.refusal(signed, body: body, key: verification) == .digestMismatch, "body")
            }
        }
    }
}
