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
            let error = try #require(throws: HTTPSignatureError.self, "\(String(describing: input))") { try Self.parse(input: input, signature: signature) }
            #expect(error.code == code, "\(String(describing: input)): \(error)")
        }
    }
}
