import CofferCrypto
@testable import CofferHTTPSignatures
import HTTPTypes
import Testing

/// `FieldScanner`, the byte-level reader of the usual `Signature-Input`, `Signature` and
/// `Content-Digest` shapes, against swift-http-structured-headers' parser: what the scanner reads, it
/// reads as the parser does; what it does not, it leaves to the parser (so a public call answers, or
/// refuses, exactly as before).
@Suite("Field scanner")
struct FieldScannerTests {
    /// `Signature-Input` and `Signature` pairs as clients send them: Coffer's signer (every algorithm
    /// shape, several signatures, a tag, expires) and RFC 9421's examples.
    static func signedPairs() throws -> [(input: String, signature: String)] {
        var pairs: [(String, String)] = []
        var request = HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/register_user?x=1")
        request.headerFields[.contentType] = "application/json"
        var signer = HTTPMessageSigner(key: .hmacSHA256(secret: try MACKey.generate()), keyID: "4Vh0mJc6Pq1pQy3o8F2sXw")
        signer.components = [.method, .targetURI, .field("content-digest"), .field("content-type"), .queryParameter("x")]
        _ = try signer.sign(&request, body: Array(#"{"email": "ada@example.com"}"#.utf8), now: 1_790_000_000)
        var second = HTTPMessageSigner(key: try HTTPSigningKey(SigningKey.generate(.ed25519)), keyID: "device-2")
        second.label = "proxy_sig"
        second.tag = "app"
        second.lifetime = 300
        second.components = [.method, .authority, .field("content-type", byteSequence: true)]
        _ = try second.sign(&request, body: nil, now: 1_790_000_001)
        pairs.append((request.headerFields[.signatureInput] ?? "", request.headerFields[.signature] ?? ""))
        for vector in RFC9421.allCases { pairs.append((vector.signatureInputHeader, vector.signatureHeader)) }
        return pairs
    }

    /// The scanner's answer for a pair, checked against the parser's; whether it answered.
    @discardableResult
    static func expectAgreement(_ input: String, _ signature: String) -> Bool {
        guard let scanned = HTTPSignatureFields.scannedSignatures(input: input, signature: signature) else { return false }
        let parsed = try? HTTPSignatureFields.parsedSignatures(input: input, signature: signature)
        #expect(scanned == parsed, "Signature-Input: \(input.debugDescription) Signature: \(signature.debugDescription)")
        return true
    }

    @Test func theUsualShapesAreScanned() throws {
        for (input, signature) in try Self.signedPairs() {
            #expect(Self.expectAgreement(input, signature), "not scanned: \(input)")
        }
        let digest = ContentDigest.fieldValue(for: [1, 2, 3], algorithms: [.sha256, .sha512])
        #expect(ContentDigest.Checker.scannedDigests(digest)?.map(\.0) == [.sha256, .sha512])
    }

    /// Shapes at the edges of RFC 9651 that the scanner must read as the parser does, or leave to it.
    @Test(arguments: [
        #"sig1=("@method");created=1"#, #"  sig1=("@method");created=1  "#, "sig1=(\"@method\")\t,\tsig2=()", #"sig1=( "a"  "b" )"#,
        #"sig1=("@method"), sig1=("@path")"#, #"sig1=("a";sf;sf)"#, #"sig1=("a";sf=?1)"#, #"sig1=("a";sf=?0)"#, #"sig1=("a";key=tok)"#,
        #"sig1=("a\"b")"#, #"sig1=("a\\b")"#, "sig1=(\"a\u{7F}\")", "sig1=(\"é\")", #"sig1=("a");created=0123"#, #"sig1=("a");created=-0"#,
        #"sig1=("a");created=123456789012345"#, #"sig1=("a");created=1234567890123456"#, #"sig1=("a");created=1.5"#, #"sig1=("a");created=-"#,
        #"sig1=("a");created=1;created=2"#, #"sig1=("a");unknown=1"#, #"sig1=("a");nonce=1"#, #"sig1=("a");keyid=:AQ==:"#, #"sig1=("a"); keyid="k""#,
        #"sig1=("a")("b")"#, #"sig1=("a"),"#, #"sig1=("a"),  "#, #"sig1"#, #"Sig1=("a")"#, #"*=("a")"#, #"sig1=("a""#, #"sig1=("a" )x"#,
        #"sig1=("a"  );alg="x";expires=3"#, "", " ", #"sig1=("a")"#, #"sig1=("a";req;bs;name="n";key="k")"#, #"sig1=("a");tag="";nonce="""#,
    ])
    func edgeShapesAgree(input: String) {
        for signature in ["sig1=:AQID:", "sig1=:AQID:, sig2=:BA==:", "sig1=:AQID:;x", "sig1=:AQ:", "sig1=::", "sig2=:AQID:", " sig1=:AQID: ", "sig1=:AQID:,sig1=:AQ==:", ""] {
            Self.expectAgreement(input, signature)
        }
    }

    @Test func mutatedFieldsAgree() throws {
        var generator = SystemRandomNumberGenerator()
        var scanned = 0, tried = 0
        for (input, signature) in try Self.signedPairs() {
            for _ in 0..<150 {
                let mutateInput = Bool.random(using: &generator)
                let newInput = mutateInput ? Self.mutated(input, using: &generator) : input
                let newSignature = mutateInput ? signature : Self.mutated(signature, using: &generator)
                tried += 1
                if Self.expectAgreement(newInput, newSignature) { scanned += 1 }
            }
        }
        // Many mutants are still well formed (a changed letter in a name or nonce): the comparison
        // must see some of them, or it checks nothing.
        #expect(scanned > tried / 10, "\(scanned) of \(tried) mutants scanned")
    }

    @Test func contentDigestsAgree() throws {
        var generator = SystemRandomNumberGenerator()
        let body: [UInt8] = Array("hello".utf8)
        let seeds = [
            ContentDigest.fieldValue(for: body), ContentDigest.fieldValue(for: body, algorithms: [.sha512, .sha256]),
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, unixsum=:MjE3Mg==:", "id-sha-256=:AQ==:",
            "sha-256=:AQ==:;x, sha-512=:AQ==:", "sha-256=:AQ==:, sha-256=:Ag==:", "sha-256=?1", "sha-256=:A:", "",
        ]
        var scanned = 0, tried = 0
        for seed in seeds {
            for index in 0..<200 {
                let value = index == 0 ? seed : Self.mutated(seed, using: &generator)
                tried += 1
                guard let digests = ContentDigest.Checker.scannedDigests(value) else { continue }
                scanned += 1
                let parsed = try? ContentDigest.Checker.parsedDigests(value)
                #expect(parsed.map { $0.map(\.0) } == digests.map(\.0) && parsed.map { $0.map(\.1) } == digests.map(\.1), "Content-Digest: \(value.debugDescription)")
            }
        }
        #expect(scanned > tried / 10, "\(scanned) of \(tried) mutants scanned")
    }

    /// `text` with one to three edits: a byte replaced, inserted or deleted, or a piece of it repeated
    /// elsewhere (which makes repeated keys and parameters).
    static func mutated(_ text: String, using generator: inout some RandomNumberGenerator) -> String {
        let alphabet = Array(" \t\"\\();=:,?*-._0123456789azAZ+/@%!~".utf8) + [0x00, 0x7F]
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let position = Int.random(in: 0...bytes.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0 where position < bytes.count: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
            case 1: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
            case 2 where position < bytes.count: bytes.remove(at: position)
            default:
                let start = Int.random(in: 0...bytes.count, using: &generator)
                let piece = bytes[start..<min(bytes.count, start + Int.random(in: 1...24, using: &generator))]
                bytes.insert(contentsOf: piece, at: position)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Fields with more members or parameters than a signature needs are refused before a parser reads
/// them: swift-http-structured-headers' maps cost the square of their number of keys (80 KiB of
/// parameters in one `Signature-Input` took a second of CPU before any signature was checked).
@Suite("Field extent")
struct FieldExtentTests {
    static func refusal(input: String = #"sig1=("@method");created=1"#, signature: String = "sig1=:AQID:") -> HTTPSignatureError? {
        var fields = HTTPFields()
        fields[.signatureInput] = input
        fields[.signature] = signature
        do {
            _ = try HTTPSignatureFields.signatures(in: fields)
            return nil
        } catch {
            return error
        }
    }

    @Test func extentCountsOutsideStrings() {
        #expect(FieldScanner.extent(of: "") == (1, 0))
        #expect(FieldScanner.extent(of: #"a=1;x;y, b=("c;d,e" "f\";g");h"#) == (2, 2))
        #expect(FieldScanner.extent(of: #"a=("x";p;q "y";r);s;t;u"#) == (1, 3))
        // A space after a semicolon does not end the parameters (`; key` is allowed); before one it does.
        #expect(FieldScanner.extent(of: "a;p; q;\tr ;s") == (1, 3))
    }

    @Test func manySignaturesAreRefusedUnread() throws {
        let members = (0..<17).map { "s\($0)=(\"@method\");created=1" }.joined(separator: ", ")
        let error = try #require(Self.refusal(input: members, signature: (0..<17).map { "s\($0)=:AQID:" }.joined(separator: ", ")))
        #expect(error == .malformedSignature && error.reason.contains("more than 16 members"), "\(error)")
        let sixteen = (0..<16).map { "s\($0)=(\"@method\");created=1" }.joined(separator: ", ")
        #expect(Self.refusal(input: sixteen, signature: (0..<16).map { "s\($0)=:AQID:" }.joined(separator: ", ")) == nil)
        let signatures = (0..<5000).map { "s\($0)=:AQID:" }.joined(separator: ", ")
        #expect(Self.refusal(signature: signatures)?.reason.contains("more than 16 members") == true)
    }

    @Test func linesAreCountedTogether() throws {
        // Nine members a line, two lines: each line is within the limit, the field is not.
        var fields = HTTPFields()
        for line in 0..<2 {
            fields.append(HTTPField(name: .signatureInput, value: (0..<9).map { "s\(line)x\($0)=(\"@method\")" }.joined(separator: ", ")))
            fields.append(HTTPField(name: .signature, value: (0..<9).map { "s\(line)x\($0)=:AQID:" }.joined(separator: ", ")))
        }
        let added = HTTPMessageSignature(label: "new", components: [.method], parameters: HTTPSignatureParameters(created: 1), signature: [1])
        for attempt in [{ _ = try HTTPSignatureFields.signatures(in: fields) }, { _ = try HTTPSignatureFields.adding(added, to: fields) }] {
            #expect { try attempt() } throws: { ($0 as? HTTPSignatureError)?.reason.contains("more than 16 members") == true }
        }
    }

    @Test(arguments: [";", "; ", ";\t"])
    func manyParametersAreRefusedUnread(separator: String) throws {
        let parameters = (0..<5000).map { "\(separator)p\($0)" }.joined()
        for input in [#"sig1=("@method")"# + parameters, #"sig1=("@method""# + parameters + ")"] {
            let error = try #require(Self.refusal(input: input))
            #expect(error == .malformedSignature && error.reason.contains("more than 16 parameters"), "\(error)")
        }
        #expect(Self.refusal(signature: "sig1=:AQID:" + parameters)?.reason.contains("more than 16 parameters") == true)
    }

    @Test func aContentDigestOfManyMembersIsRefused() throws {
        let body = Array("hello".utf8)
        let digest = ContentDigest.fieldValue(for: body)
        let others = (0..<15).map { "x\($0)=:AQ==:" }
        try ContentDigest.check(([digest] + others).joined(separator: ", "), body: body)
        #expect(throws: HTTPSignatureError.self) { try ContentDigest.check(([digest] + others + ["y=:AQ==:"]).joined(separator: ", "), body: body) }
        #expect(throws: HTTPSignatureError.self) { try ContentDigest.check(digest + (0..<5000).map { ";p\($0)" }.joined(), body: body) }
    }

    @Test func aCoveredStructuredFieldOfManyMembersIsRefused() throws {
        var request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/")
        let name = try #require(HTTPField.Name("example-dict"))
        request.headerFields[name] = (0..<256).map { "k\($0)=\($0)" }.joined(separator: ", ")
        for component in [HTTPSignatureComponent.field("example-dict", structured: true), .field("example-dict", key: "k1")] {
            _ = try HTTPSignatureBase.make(for: request, covering: [component], parameters: HTTPSignatureParameters(created: 1))
        }
        request.headerFields[name] = (0..<257).map { "k\($0)=\($0)" }.joined(separator: ", ")
        for component in [HTTPSignatureComponent.field("example-dict", structured: true), .field("example-dict", key: "k1")] {
            #expect(throws: HTTPSignatureError.invalidComponent) {
                _ = try HTTPSignatureBase.make(for: request, covering: [component], parameters: HTTPSignatureParameters(created: 1))
            }
        }
    }
}
