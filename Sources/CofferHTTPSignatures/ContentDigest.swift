import CofferCore
import CofferCrypto
import RawStructuredFieldValues

/// The digest algorithms of RFC 9530's registry that Coffer creates and checks.
public enum ContentDigestAlgorithm: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// `sha-256`.
    case sha256 = "sha-256"
    /// `sha-512`.
    case sha512 = "sha-512"

    var digestAlgorithm: DigestAlgorithm { self == .sha256 ? .sha256 : .sha512 }

    /// The registered name.
    public var description: String { rawValue }
}

/// RFC 9530 `Content-Digest`: a digest of the message content that a signature can cover, so that the
/// signature protects the body too. Computed and checked in a stream; one call for bodies in memory.
///
/// ```swift
/// request.headerFields[.contentDigest] = ContentDigest.fieldValue(for: body)   // sha-256=:…:
/// try ContentDigest.check(request.headerFields[.contentDigest] ?? "", body: body)
/// ```
public enum ContentDigest {
    /// The most digests a `Content-Digest` field may carry; a field with more is refused as malformed
    /// (RFC 9530's registry names a handful of algorithms).
    public static let maximumDigests = 16

    /// The `Content-Digest` field value for a body held in memory.
    public static func fieldValue<Body: Sequence>(for body: Body, algorithms: [ContentDigestAlgorithm] = [.sha256]) -> String where Body.Element == UInt8 {
        var hasher = Hasher(algorithms: algorithms)
        hasher.update(body)
        return hasher.fieldValue()
    }

    /// Checks a body held in memory against a `Content-Digest` field value.
    /// - Throws: what ``Checker`` throws.
    public static func check<Body: Sequence>(_ fieldValue: String, body: Body) throws(HTTPSignatureError) where Body.Element == UInt8 {
        var checker = try Checker(fieldValue: fieldValue)
        checker.update(body)
        try checker.finish()
    }

    /// Computes a `Content-Digest` field value over a body fed in pieces.
    public struct Hasher: Sendable {
        private var digesters: [(ContentDigestAlgorithm, Digester)]

        /// Starts hashing with each algorithm (sha-256 by default); duplicates are ignored.
        public init(algorithms: [ContentDigestAlgorithm] = [.sha256]) {
            var seen: Set<ContentDigestAlgorithm> = []
            digesters = algorithms.filter { seen.insert($0).inserted }.map { ($0, Digester($0.digestAlgorithm)) }
        }

        /// Adds the next bytes of the body.
        public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
            for index in digesters.indices { digesters[index].1.update(bytes) }
        }

        /// The field value for everything added so far, e.g. `sha-256=:X48E9q…=:`.
        public func fieldValue() -> String {
            digesters.map { "\($0.0.rawValue)=:\($0.1.finalize().base64):" }.joined(separator: ", ")
        }
    }

    /// Checks a body fed in pieces against a `Content-Digest` field value: every digest the field
    /// carries with an algorithm Coffer knows must match (others are ignored), compared in constant time.
    public struct Checker: Sendable {
        private var expected: [(ContentDigestAlgorithm, [UInt8])]
        private var digesters: [(ContentDigestAlgorithm, Digester)]

        /// Reads the field value.
        /// - Throws: ``HTTPSignatureError`` `.malformedSignature` when it is not a dictionary of byte
        ///   sequences or carries more than ``ContentDigest/maximumDigests`` members; `.digestMismatch`
        ///   when it names neither sha-256 nor sha-512.
        public init(fieldValue: String) throws(HTTPSignatureError) {
            try HTTPSignatureFields.checkExtent(fieldValue, field: "Content-Digest", members: ContentDigest.maximumDigests)
            let expected: [(ContentDigestAlgorithm, [UInt8])]
            if let scanned = Self.scannedDigests(fieldValue) {
                expected = scanned
            } else {
                expected = try Self.parsedDigests(fieldValue)
            }
            guard !expected.isEmpty else {
                throw HTTPSignatureError(.digestMismatch, "Content-Digest carries no sha-256 or sha-512 digest, the algorithms Coffer checks")
            }
            self.expected = expected
            self.digesters = expected.map { ($0.0, Digester($0.0.digestAlgorithm)) }
        }

        /// The digests a field value carries, with algorithms Coffer knows, through
        /// swift-http-structured-headers' parser.
        static func parsedDigests(_ fieldValue: String) throws(HTTPSignatureError) -> [(ContentDigestAlgorithm, [UInt8])] {
            let members = try HTTPSignatureFields.dictionary(fieldValue, field: "Content-Digest")
            var expected: [(ContentDigestAlgorithm, [UInt8])] = []
            for (name, member) in members {
                guard case .item(let item) = member, case .undecodedByteSequence(let encoded) = item.rfc9651BareItem,
                      let bytes = try? Base64.decode(encoded) else {
                    throw HTTPSignatureError(.malformedSignature, "Content-Digest's '\(name)' is not a byte sequence")
                }
                guard let algorithm = ContentDigestAlgorithm(rawValue: name) else { continue }
                expected.append((algorithm, bytes))
            }
            return expected
        }

        /// ``parsedDigests(_:)`` for a field in the shape ``FieldScanner`` reads (byte sequences without
        /// parameters); nil for anything else.
        static func scannedDigests(_ fieldValue: String) -> [(ContentDigestAlgorithm, [UInt8])]? {
            var expected: [(ContentDigestAlgorithm, [UInt8])] = []
            var scanner = FieldScanner(fieldValue)
            let names = scanner.dictionary { scanner, name in
                guard let encoded = scanner.byteSequence(), let bytes = try? Base64.decode(encoded) else { return false }
                if let algorithm = ContentDigestAlgorithm(rawValue: name) { expected.append((algorithm, bytes)) }
                return true
            }
            return names == nil ? nil : expected
        }

        /// Adds the next bytes of the body.
        public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
            for index in digesters.indices { digesters[index].1.update(bytes) }
        }

        /// Checks the digests of everything added.
        /// - Throws: ``HTTPSignatureError`` `.digestMismatch` naming the algorithm that differs.
        public func finish() throws(HTTPSignatureError) {
            for (algorithm, bytes) in expected {
                guard let digester = digesters.first(where: { $0.0 == algorithm })?.1,
                      digester.finalize().matches(bytes) else {
                    throw HTTPSignatureError(.digestMismatch, "the body does not match its Content-Digest (\(algorithm))")
                }
            }
        }
    }
}
