import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Testing

/// The RFC 9421 examples (Tests/Vectors/rfc9421), decoded once for the suites that use them.
enum RFC9421 {
    struct Vectors: Decodable {
        let messages: [String: Message]
        let appendixBCases: [Case]
        let mainTextExamples: [Case]
        let transformations: Transformations

        enum CodingKeys: String, CodingKey {
            case messages
            case appendixBCases = "appendix_b_cases"
            case mainTextExamples = "main_text_examples"
            case transformations = "appendix_b4_transformations"
        }
    }

    struct Message: Decodable {
        let headers: [[String]]
        let method: String?
        let status: Int?
        let target: String?
        let body: String
    }

    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        let id: String
        let alg: String
        let keyid: String
        let label: String
        let message: String
        let relatedRequest: String?
        let signatureBase: String
        let signatureInputHeader: String
        let signatureHeader: String
        let signatureB64: String
        let deterministic: Bool

        enum CodingKeys: String, CodingKey {
            case id, alg, keyid, label, message, deterministic
            case relatedRequest = "related_request"
            case signatureBase = "signature_base"
            case signatureInputHeader = "signature_input_header"
            case signatureHeader = "signature_header"
            case signatureB64 = "signature_b64"
        }

        var testDescription: String { id }
    }

    struct Transformations: Decodable {
        let variants: [Variant]
    }

    struct Variant: Decodable, CustomTestStringConvertible, Sendable {
        let description: String
        let messageText: String
        let expectedValid: Bool

        enum CodingKeys: String, CodingKey {
            case description
            case messageText = "message_text"
            case expectedValid = "expected_valid"
        }

        var testDescription: String { description }
    }

    static let vectors: Vectors = {
        do {
            return try TestVectors.load(Vectors.self, from: "rfc9421/rfc9421_vectors.json")
        } catch {
            preconditionFailure("rfc9421_vectors.json does not load: \(error)")
        }
    }()

    static var allCases: [Case] { vectors.appendixBCases + vectors.mainTextExamples }

    static func fields(_ message: Message) throws -> (HTTPFields, authority: String?) {
        var fields = HTTPFields()
        var authority: String?
        for pair in message.headers {
            if pair[0].lowercased() == "host" { authority = pair[1] }
            fields.append(HTTPField(name: try #require(HTTPField.Name(pair[0])), value: pair[1]))
        }
        return (fields, authority)
    }

    static func request(_ name: String) throws -> HTTPRequest {
        let message = try #require(vectors.messages[name])
        let (fields, authority) = try fields(message)
        return HTTPRequest(method: try #require(HTTPRequest.Method(message.method ?? "")), scheme: "https", authority: authority, path: message.target, headerFields: fields)
    }

    static func response(_ name: String) throws -> HTTPResponse {
        let message = try #require(vectors.messages[name])
        return HTTPResponse(status: .init(code: try #require(message.status)), headerFields: try fields(message).0)
    }

    /// The message a case signs, as our API models it.
    static func signedMessage(_ vector: Case) throws -> HTTPSignedMessage {
        let message = try #require(vectors.messages[vector.message])
        if message.method != nil { return .request(try request(vector.message)) }
        return .response(try response(vector.message), request: try vector.relatedRequest.map(request))
    }

    /// The case's own signature, read from its Signature-Input and Signature values by our parser.
    static func signature(_ vector: Case) throws -> HTTPMessageSignature {
        var fields = HTTPFields()
        fields[.signatureInput] = vector.signatureInputHeader
        fields[.signature] = vector.signatureHeader
        return try #require(try HTTPSignatureFields.signatures(in: fields).first { $0.label == vector.label })
    }

    static func algorithm(_ vector: Case) throws -> HTTPSignatureAlgorithm {
        try #require(HTTPSignatureAlgorithm(rawValue: vector.alg))
    }

    static func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestVectors.url("rfc9421/\(path)")))
    }

    static func sharedSecret() throws -> MACKey {
        let text = String(decoding: try file("keys/test-shared-secret.b64"), as: UTF8.self)
        return try MACKey(bytes: Base64.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    static func verificationKey(_ keyID: String, _ algorithm: HTTPSignatureAlgorithm) throws -> HTTPVerificationKey {
        if algorithm == .hmacSHA256 { return .hmacSHA256(secret: try sharedSecret()) }
        return try HTTPVerificationKey(ImportedKey(importing: file("keys/\(keyID).pub.pem")).verifyingKey, algorithm: algorithm)
    }

    static func signingKey(_ keyID: String, _ algorithm: HTTPSignatureAlgorithm) throws -> HTTPSigningKey {
        if algorithm == .hmacSHA256 { return .hmacSHA256(secret: try sharedSecret()) }
        return try HTTPSigningKey(try #require(ImportedKey(importing: file("keys/\(keyID).key.pem")).signingKey), algorithm: algorithm)
    }
}
