import CofferCrypto
import CofferHTTPSignatures
import HTTPTypes
import Testing

/// The Signature-Input and Signature parser against hostile field values.
@Suite("Signature fields")
struct SignatureFieldTests {
    static func parse(input: String?, signature: String?) throws -> [HTTPMessageSignature] {
        var fields = HTTPFields()
        if let input { fields[.signatureInput] = input }
        if let signature { fields[.signature] = signature }
        return try HTTPSignatureFields.signatures(in: fields)
    }

    @Test func wellFormedFieldsRoundTrip() throws {
        let input = #"sig1=("@method" "@query-param";name="Pet" "example-dict";key="a" "x";sf "y";bs "@authority";req);created=1;expires=2;nonce="n";alg="ed25519";keyid="k";tag="t""#
        let parsed = try Self.parse(input: input, signature: "sig1=:AQID:")
        let signature = try #require(parsed.first)
        #expect(signature.components.map(\.description) == [#""@method""#, #""@query-param";name="Pet""#, #""example-dict";key="a""#, #""x";sf"#, #""y";bs"#, #""@authority";req"#])
        #expect(signature.parameters.created == 1 && signature.parameters.expires == 2 && signature.parameters.nonce == "n")
        #expect(signature.parameters.algorithm == "ed25519" && signature.parameters.keyID == "k" && signature.parameters.tag == "t")
        #expect(signature.signature == [1, 2, 3])
        let (rewritten, value) = try HTTPSignatureFields.adding(signature, to: HTTPFields())
        #expect(rewritten == input)
        #expect(value == "sig1=:AQID:")
        #expect(try Self.parse(input: nil, signature: nil).isEmpty)
    }

    @Test func malformedFieldsAreTypedErrors() throws {
        let cases: [(String?, String?, HTTPSignatureError.Code)] = [
            ("sig1=(\"@method\")", nil, .malformedSignature),
            (nil, "sig1=:AQID:", .malformedSignature),
            ("sig1=(\"@method\")", "sig2=:AQID:", .malformedSignature),
            ("sig1=\"@method\"", "sig1=:AQID:", .malformedSignature),
            ("sig1=(@method)", "sig1=:AQID:", .malformedSignature),
            ("sig1=(\"@method\")", "sig1=\"AQID\"", .malformedSignature),
            ("sig1=(\"@method\")", "sig1=:!!!!:", .malformedSignature),
            ("sig1=(\"@method\")", "sig1=::", .malformedSignature),
            ("sig1=(\"@method\")", "sig1=:" + String(repeating: "A", count: 2000) + ":", .malformedSignature),
            ("sig1=(\"@method\");created=\"1\"", "sig1=:AQID:", .invalidParameter),
            ("sig1=(\"@method\");keyid=1", "sig1=:AQID:", .invalidParameter),
            ("sig1=(\"@method\");unknown=1", "sig1=:AQID:", .invalidParameter),
            ("sig1=(\"@method\";foo)", "sig1=:AQID:", .invalidComponent),
            ("sig1=(\"x\";bs=?0)", "sig1=:AQID:", .invalidComponent),
            ("sig1=(1)", "sig1=:AQID:", .malformedSignature),
            ("((((", "sig1=:AQID:", .malformedSignature),
            ((0..<17).map { "s\($0)=()" }.joined(separator: ", "), (0..<17).map { "s\($0)=:AQID:" }.joined(separator: ", "), .malformedSignature),
            ("sig1=(" + (0..<65).map { "\"h\($0)\"" }.joined(separator: " ") + ")", "sig1=:AQID:", .malformedSignature),
        ]
        for (input, signature, code) in cases {
            #expect(throws: HTTPSignatureError.matching(code), "\(String(describing: input))") { try Self.parse(input: input, signature: signature) }
        }
    }

    /// `@signature-params` is written directly (the hot path of signing and verifying); it must be the
    /// exact bytes swift-http-structured-headers' serializer writes for the same inner list.
    @Test func signatureParamsAreTheStructuredFieldSerialization() throws {
        let components: [[HTTPSignatureComponent]] = [
            [],
            [.method, .targetURI, .field("content-digest"), .field("content-type")],
            [.queryParameter("Pet"), .queryParameter(#"a"b\c"#), .field("example-dict", key: "a"), .field("x", structured: true)],
            [.field("y", byteSequence: true), HTTPSignatureComponent.authority.fromRequest, .status, HTTPSignatureComponent(name: #"we"ird\"#)],
        ]
        let parameters: [HTTPSignatureParameters] = [
            HTTPSignatureParameters(),
            HTTPSignatureParameters(created: 1_618_884_473, keyID: "test-key-rsa-pss"),
            HTTPSignatureParameters(created: -5, expires: 999_999_999_999_999, nonce: #"n"o\nce"#, algorithm: "ed25519", keyID: "k", tag: "app tag"),
            {
                var reordered = HTTPSignatureParameters(created: 7, nonce: "x", keyID: "k")
                reordered.order = ["keyid", "nonce", "created"]
                return reordered
            }(),
        ]
        var existing = HTTPFields()
        existing[.signatureInput] = #"other=("@method");created=1"#
        existing[.signature] = "other=:AQID:"
        for covered in components {
            for parameters in parameters {
                let signature = HTTPMessageSignature(label: "sig1", components: covered, parameters: parameters, signature: [1, 2, 3])
                let (input, _) = try HTTPSignatureFields.adding(signature, to: existing)
                let direct = try HTTPSignatureBase.signatureParams(covered, parameters)
                #expect(input == #"other=("@method");created=1, sig1="# + direct, "\(covered) \(parameters)")
            }
        }
        let unprintable: [([HTTPSignatureComponent], HTTPSignatureParameters)] = [
            ([HTTPSignatureComponent(name: "caf\u{E9}")], HTTPSignatureParameters()),
            ([.queryParameter("tab\there")], HTTPSignatureParameters()),
            ([.method], HTTPSignatureParameters(keyID: "line\nbreak")),
            ([.method], HTTPSignatureParameters(created: 1_000_000_000_000_000)),
        ]
        for (covered, parameters) in unprintable {
            #expect(throws: HTTPSignatureError.self) { try HTTPSignatureBase.signatureParams(covered, parameters) }
        }
    }

    /// Parameters are written in the order received, each name once, then those set but not received
    /// in the default order; names without a value and unknown names are skipped.
    @Test func parametersFollowTheReceivedOrderThenTheDefaultOne() throws {
        var all = HTTPSignatureParameters(created: 7, expires: 9, nonce: "n", algorithm: "a", keyID: "k", tag: "t")
        #expect(try HTTPSignatureBase.signatureParams([], all) == #"();created=7;expires=9;nonce="n";alg="a";keyid="k";tag="t""#)
        all.order = ["keyid", "created", "keyid", "unknown", "tag"]
        #expect(try HTTPSignatureBase.signatureParams([], all) == #"();keyid="k";created=7;tag="t";expires=9;nonce="n";alg="a""#)
        all.order = []
        #expect(try HTTPSignatureBase.signatureParams([], all) == #"();created=7;expires=9;nonce="n";alg="a";keyid="k";tag="t""#)
        var two = HTTPSignatureParameters(created: 7, keyID: "k")
        two.order = ["expires", "keyid"]
        #expect(try HTTPSignatureBase.signatureParams([.method], two) == #"("@method");keyid="k";created=7"#)
    }

    /// A message without signatures gets its fields written directly; they must read back, and be what
    /// the structured-field serializer writes.
    @Test func directlyWrittenFieldsMatchTheSerializer() throws {
        let signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey(bytes: Array(repeating: 7, count: 32))), keyID: #"key "one""#)
        var request = HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/a?b=c")
        request.headerFields[.contentType] = "application/json"
        let signature = try signer.sign(&request, body: Array("{}".utf8), now: 1_700_000_000)
        let (input, value) = try HTTPSignatureFields.adding(signature, to: HTTPFields())
        #expect(request.headerFields[.signatureInput] == input)
        #expect(request.headerFields[.signature] == value)
        #expect(try HTTPSignatureFields.signatures(in: request.headerFields) == [signature.withParsedOrder])
    }
}

extension HTTPMessageSignature {
    /// The signature as parsing its fields gives it back: with the parameters' order recorded.
    var withParsedOrder: HTTPMessageSignature {
        var copy = self
        copy.parameters.order = ["created", "expires", "nonce", "alg", "keyid", "tag"].filter { name in
            switch name {
            case "created": parameters.created != nil
            case "expires": parameters.expires != nil
            case "nonce": parameters.nonce != nil
            case "alg": parameters.algorithm != nil
            case "keyid": parameters.keyID != nil
            default: parameters.tag != nil
            }
        }
        return copy
    }
}
