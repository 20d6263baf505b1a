import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferTesting
import Foundation
import HTTPTypes
import Testing

/// The RFC 9421 Appendix B request cases (Tests/Vectors/rfc9421): our signature base must equal the
/// RFC's byte for byte, and the RFC's signatures must verify over it with the RFC's keys.
@Suite("RFC 9421 signature base")
struct SignatureBaseTests {
    struct Vectors: Decodable {
        let messages: [String: Message]
        let appendixBCases: [Case]

        enum CodingKeys: String, CodingKey {
            case messages
            case appendixBCases = "appendix_b_cases"
        }
    }

    struct Message: Decodable {
        let headers: [[String]]
        let method: String?
        let target: String?
    }

    struct Case: Decodable, CustomTestStringConvertible {
        let id: String
        let alg: String
        let keyid: String
        let message: String
        let signatureBase: String
        let signatureB64: String
        let coveredComponents: [String]

        enum CodingKeys: String, CodingKey {
            case id, alg, keyid, message
            case signatureBase = "signature_base"
            case signatureB64 = "signature_b64"
            case coveredComponents = "covered_components"
        }

        var testDescription: String { id }
    }

    static let vectors: Vectors = {
        do {
            return try TestVectors.load(Vectors.self, from: "rfc9421/rfc9421_vectors.json")
        } catch {
            preconditionFailure("rfc9421_vectors.json does not load: \(error)")
        }
    }()

    /// The request cases (B.2.4 signs a response, which the request API does not cover).
    static var requestCases: [Case] {
        vectors.appendixBCases.filter { vectors.messages[$0.message]?.method != nil }
    }

    static func request(_ message: Message) throws -> HTTPRequest {
        var fields = HTTPFields()
        var authority: String?
        for pair in message.headers {
            if pair[0].lowercased() == "host" { authority = pair[1] }
            fields.append(HTTPField(name: try #require(HTTPField.Name(pair[0])), value: pair[1]))
        }
        return HTTPRequest(method: try #require(HTTPRequest.Method(message.method ?? "")), scheme: "https", authority: authority, path: message.target, headerFields: fields)
    }

    /// Reads `"@query-param";name="Pet"` and `"date"` back into components (a stand-in for the
    /// Signature-Input parser that comes next).
    static func component(_ text: String) throws -> HTTPSignatureComponent {
        let parts = text.split(separator: ";", maxSplits: 1)
        let name = String(parts[0].dropFirst().dropLast())
        if parts.count == 2 {
            let parameter = String(parts[1])
            try #require(parameter.hasPrefix("name=\""))
            return .queryParameter(String(parameter.dropFirst(6).dropLast()))
        }
        switch name {
        case "@method": return .method
        case "@authority": return .authority
        case "@path": return .path
        case "@query": return .query
        case "@target-uri": return .targetURI
        case "@scheme": return .scheme
        case "@request-target": return .requestTarget
        default: return .field(name)
        }
    }

    /// The case's parameters, in the order the RFC printed them.
    static func parameters(from base: String) throws -> HTTPSignatureParameters {
        let line = try #require(base.split(separator: "\n").last)
        let afterList = try #require(line.range(of: ");")).upperBound
        var parameters = HTTPSignatureParameters()
        var order: [String] = []
        for item in line[afterList...].split(separator: ";") {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            let value = pair[1].hasPrefix("\"") ? String(pair[1].dropFirst().dropLast()) : pair[1]
            order.append(pair[0])
            switch pair[0] {
            case "created": parameters.created = Int64(value)
            case "expires": parameters.expires = Int64(value)
            case "nonce": parameters.nonce = value
            case "alg": parameters.algorithm = value
            case "keyid": parameters.keyID = value
            case "tag": parameters.tag = value
            default: Issue.record("unknown parameter \(pair[0])")
            }
        }
        parameters.order = order
        return parameters
    }

    @Test(arguments: requestCases)
    func baseMatchesTheRFC(vector: Case) throws {
        let message = try #require(Self.vectors.messages[vector.message])
        let components = try vector.coveredComponents.map(Self.component)
        let base = try HTTPSignatureBase.make(for: Self.request(message), covering: components, parameters: Self.parameters(from: vector.signatureBase))
        let expected = try String(contentsOf: TestVectors.url("rfc9421/signature-bases/\(vector.id).txt"), encoding: .utf8)
        #expect(base == expected)
        #expect(base == vector.signatureBase)
    }

    @Test(arguments: requestCases)
    func theRFCSignatureVerifiesOverOurBase(vector: Case) throws {
        let message = try #require(Self.vectors.messages[vector.message])
        let components = try vector.coveredComponents.map(Self.component)
        let base = Array(try HTTPSignatureBase.make(for: Self.request(message), covering: components, parameters: Self.parameters(from: vector.signatureBase)).utf8)
        let signature = try Base64.decode(vector.signatureB64)
        if vector.alg == "hmac-sha256" {
            let secret = try Base64.decode(String(contentsOf: TestVectors.url("rfc9421/keys/test-shared-secret.b64"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines))
            let key = try MACKey(bytes: secret)
            #expect(try MACAlgorithm.hmacSHA256.isValidAuthenticationCode(signature, for: base, using: key))
            return
        }
        let pem = Array(try Data(contentsOf: TestVectors.url("rfc9421/keys/\(vector.keyid).pub.pem")))
        let key = try KeyImporter.read(pem).verifyingKey
        var options = SignatureOptions()
        switch vector.alg {
        case "rsa-pss-sha512":
            options.rsaPadding = .pss
            options.hash = .sha512
        case "ecdsa-p256-sha256":
            options.ecdsaEncoding = .raw
            options.hash = .sha256
        default:
            break
        }
        #expect(key.isValidSignature(signature, for: base, options: options), "\(vector.alg)")
        var tampered = base
        tampered[0] ^= 1
        #expect(!key.isValidSignature(signature, for: tampered, options: options))
    }

    @Test func missingAndDuplicateComponentsAreTypedErrors() throws {
        let request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/a?b=c")
        let parameters = HTTPSignatureParameters(created: 1)
        let missing = try #require(throws: HTTPSignatureError.self) {
            try HTTPSignatureBase.make(for: request, covering: [.field("content-digest")], parameters: parameters)
        }
        #expect(missing.code == .missingComponent)
        let absentParameter = try #require(throws: HTTPSignatureError.self) {
            try HTTPSignatureBase.make(for: request, covering: [.queryParameter("x")], parameters: parameters)
        }
        #expect(absentParameter.code == .missingComponent)
        let twice = try #require(throws: HTTPSignatureError.self) {
            try HTTPSignatureBase.make(for: request, covering: [.method, .method], parameters: parameters)
        }
        #expect(twice.code == .duplicateComponent)
    }

    @Test func derivedComponentsOfARequest() throws {
        let request = HTTPRequest(method: .post, scheme: "HTTPS", authority: "WWW.Example.com:443", path: "/path?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        func value(_ component: HTTPSignatureComponent) throws -> String {
            let base = try HTTPSignatureBase.make(for: request, covering: [component], parameters: HTTPSignatureParameters())
            return String(try #require(base.split(separator: "\n").first).split(separator: " ", maxSplits: 1)[1])
        }
        #expect(try value(.method) == "POST")
        #expect(try value(.authority) == "www.example.com")
        #expect(try value(.scheme) == "https")
        #expect(try value(.targetURI) == "https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        #expect(try value(.requestTarget) == "/path?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        #expect(try value(.path) == "/path")
        #expect(try value(.query) == "?param=value&foo=bar&baz=bat%2Dman&q=a+b")
        #expect(try value(.queryParameter("baz")) == "bat-man")
        #expect(try value(.queryParameter("q")) == "a%20b")
    }
}
