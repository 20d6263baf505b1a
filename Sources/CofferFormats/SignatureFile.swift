public import CofferCore
public import CofferCrypto

/// Coffer's detached signature file, version 1, as specified in `docs/FORMAT-SIGNATURE.md`: algorithm,
/// hash, key id and a signed comment, in a pasteable PEM-style armour.
///
/// ```swift
/// let signature = try SignatureFile.sign(fileAtPath: "release.tar.gz", with: key, comment: "release 1.2")
/// try signature.armored.write(…)
/// switch try SignatureFile(parsing: text).verify(fileAtPath: "release.tar.gz", with: publicKey) {
/// case .valid(let comment): print("good signature:", comment)
/// case .invalid, .wrongKey: exit(1)
/// }
/// ```
public struct SignatureFile: Sendable, Hashable {
    /// The signature algorithm byte.
    public enum Algorithm: UInt8, Sendable, CaseIterable, CustomStringConvertible {
        /// Ed25519 over the signed message M (docs/FORMAT-SIGNATURE.md).
        case ed25519 = 1
        /// ECDSA on P-256, DER-encoded signature.
        case ecdsaP256 = 2
        /// ECDSA on P-384, DER-encoded signature.
        case ecdsaP384 = 3
        /// ECDSA on P-521, DER-encoded signature.
        case ecdsaP521 = 4
        /// RSA PKCS #1 v1.5.
        case rsaPKCS1v15 = 5
        /// RSA PSS with MGF1 and a salt as long as the hash.
        case rsaPSS = 6
        /// ML-DSA-65 (FIPS 204).
        case mldsa65 = 7
        /// ML-DSA-87 (FIPS 204).
        case mldsa87 = 8

        /// A readable name: "Ed25519", "ECDSA P-256", "RSA PSS"…
        public var description: String {
            switch self {
            case .ed25519: "Ed25519"
            case .ecdsaP256: "ECDSA P-256"
            case .ecdsaP384: "ECDSA P-384"
            case .ecdsaP521: "ECDSA P-521"
            case .rsaPKCS1v15: "RSA PKCS#1 v1.5"
            case .rsaPSS: "RSA PSS"
            case .mldsa65: "ML-DSA-65"
            case .mldsa87: "ML-DSA-87"
            }
        }

        /// The algorithm a key signs with; RSA keys take the padding asked for.
        public init(for key: KeyAlgorithm, rsaPadding: RSAPadding) {
            switch key {
            case .rsa: self = rsaPadding == .pss ? .rsaPSS : .rsaPKCS1v15
            case .p256: self = .ecdsaP256
            case .p384: self = .ecdsaP384
            case .p521: self = .ecdsaP521
            case .ed25519: self = .ed25519
            case .mldsa65: self = .mldsa65
            case .mldsa87: self = .mldsa87
            }
        }

        /// Whether a key of this algorithm can have made such a signature.
        func fits(_ key: KeyAlgorithm) -> Bool {
            switch (self, key) {
            case (.rsaPKCS1v15, .rsa), (.rsaPSS, .rsa), (.ecdsaP256, .p256), (.ecdsaP384, .p384), (.ecdsaP521, .p521),
                (.ed25519, .ed25519), (.mldsa65, .mldsa65), (.mldsa87, .mldsa87):
                true
            default: false
            }
        }

        /// The exact signature length, where the algorithm fixes one.
        var fixedLength: Int? {
            switch self {
            case .ed25519: 64
            case .ecdsaP256: 64
            case .ecdsaP384: 96
            case .ecdsaP521: 132
            case .mldsa65: 3309
            case .mldsa87: 4627
            case .rsaPKCS1v15, .rsaPSS: nil
            }
        }
    }

    /// The outcome of a verification.
    public enum Verification: Sendable, Hashable {
        /// The signature is valid; the comment is now trustworthy.
        case valid(comment: String)
        /// The signature does not match the file (or the comment or header was altered).
        case invalid
        /// The signature names another key than the one given; both key ids, as hex.
        case wrongKey(signatureKeyID: String, givenKeyID: String)
        /// The signature's algorithm cannot have been made by the key given.
        case wrongAlgorithm(signature: Algorithm, key: KeyAlgorithm)
    }

    /// The four bytes a binary signature file starts with: `CSIG`.
    public static let magic: [UInt8] = Array("CSIG".utf8)
    /// The format version this code writes and reads.
    public static let version: UInt8 = 1
    /// The longest trusted comment, in UTF-8 bytes.
    public static let maximumCommentBytes = 1024
    /// The longest signature a file may hold (ML-DSA-87 needs 4,627 bytes).
    public static let maximumSignatureBytes = 8192
    /// The largest signature file read; anything larger is refused unread.
    public static let maximumFileBytes = 65_536
    static let label = "COFFER SIGNATURE"
    static let domain: [UInt8] = Array("coffer-signature-v1".utf8) + [0]

    /// The signature algorithm.
    public let algorithm: Algorithm
    /// The hash applied to the file.
    public let hash: DigestAlgorithm
    /// The first 8 bytes of the signing key's fingerprint.
    public let keyID: [UInt8]
    /// The comment as stored. - Warning: not authenticated until ``verify(fileAtPath:with:progress:)``
    /// returns `.valid`, which hands back the same text; show that one.
    public let unverifiedComment: String
    /// The signature bytes.
    public let signature: [UInt8]

    // MARK: - Signing

    /// Signs a file (or `-` for standard input), hashing it in a stream, and checks the new signature
    /// with the public key before returning it.
    public static func sign(
        fileAtPath path: String,
        with key: SigningKey,
        comment: String,
        hash: DigestAlgorithm = .sha512,
        rsaPadding: RSAPadding = .pss,
        progress: ((Int64) -> Void)? = nil
    ) throws -> SignatureFile {
        try checkHash(hash)
        let digest = try hash.hash(fileAtPath: path, progress: progress)
        return try sign(digest: digest, with: key, comment: comment, rsaPadding: rsaPadding)
    }

    /// Signs a file's digest: computed by Coffer, or received as bytes (`DigestValue(algorithm:bytes:)`),
    /// since the format signs a message that holds the digest's bytes.
    /// - Throws: ``CofferFormatsError`` `.unsupported` for a hash other than SHA-256, SHA-384 or SHA-512;
    ///   `.invalidArgument` for a comment too long or holding NUL.
    public static func sign(digest: DigestValue, with key: SigningKey, comment: String, rsaPadding: RSAPadding = .pss) throws(CofferFormatsError) -> SignatureFile {
        try checkHash(digest.algorithm)
        return try CofferFormatsError.wrapping("signing") { () throws -> SignatureFile in
            guard comment.utf8.count <= maximumCommentBytes, !comment.utf8.contains(0) else {
                throw CofferFormatsError(.invalidArgument, "the comment must be at most \(maximumCommentBytes) bytes of UTF-8 without NUL")
            }
            let algorithm = Algorithm(for: key.algorithm, rsaPadding: rsaPadding)
            let keyID = Array(key.verifyingKey.fingerprint.sha256.prefix(8))
            let message = signedMessage(algorithm: algorithm, hash: digest.algorithm, keyID: keyID, comment: comment, digest: digest.bytes)
            let options = SignatureOptions(hash: digest.algorithm, rsaPadding: rsaPadding, ecdsaEncoding: .raw)
            let signature = try key.signature(forLabelled: message, options: options)
            let file = SignatureFile(algorithm: algorithm, hash: digest.algorithm, keyID: keyID, unverifiedComment: comment, signature: signature)
            // Check yourself: a signature that does not verify is never handed out.
            guard case .valid = file.verify(digest: digest, with: key.verifyingKey) else {
                throw CofferFormatsError(.invalidArgument, "the new signature did not verify with its own public key; nothing was written")
            }
            return file
        }
    }

    private init(algorithm: Algorithm, hash: DigestAlgorithm, keyID: [UInt8], unverifiedComment: String, signature: [UInt8]) {
        self.algorithm = algorithm
        self.hash = hash
        self.keyID = keyID
        self.unverifiedComment = unverifiedComment
        self.signature = signature
    }

    static func signedMessage(algorithm: Algorithm, hash: DigestAlgorithm, keyID: [UInt8], comment: String, digest: [UInt8]) -> [UInt8] {
        let commentBytes = Array(comment.utf8)
        return domain + [algorithm.rawValue, hashByte(hash)] + keyID
            + bigEndian16(commentBytes.count) + commentBytes + digest
    }

    // MARK: - Verifying

    /// Verifies the signature over a file (or `-`), hashing it in a stream with the signature's hash.
    /// - Throws: `CofferCoreError` if the file cannot be read.
    public func verify(fileAtPath path: String, with key: VerifyingKey, progress: ((Int64) -> Void)? = nil) throws(CofferCoreError) -> Verification {
        if let early = precheck(key) { return early }
        let digest = try hash.hash(fileAtPath: path, progress: progress)
        return verify(digest: digest, with: key)
    }

    /// Verifies the signature over a file's digest (computed by Coffer or received as bytes); a digest
    /// with another hash function than the signature's is `.invalid`.
    public func verify(digest: DigestValue, with key: VerifyingKey) -> Verification {
        if let early = precheck(key) { return early }
        guard digest.algorithm == hash else { return .invalid }
        let message = Self.signedMessage(algorithm: algorithm, hash: hash, keyID: keyID, comment: unverifiedComment, digest: digest.bytes)
        let options = SignatureOptions(hash: hash, rsaPadding: algorithm == .rsaPSS ? .pss : .pkcs1v15, ecdsaEncoding: .raw)
        return key.isValidSignature(signature, for: message, options: options) ? .valid(comment: unverifiedComment) : .invalid
    }

    private func precheck(_ key: VerifyingKey) -> Verification? {
        let given = Array(key.fingerprint.sha256.prefix(8))
        guard ConstantTime.equals(given, keyID) else {
            return .wrongKey(signatureKeyID: Hex.encode(keyID), givenKeyID: Hex.encode(given))
        }
        guard algorithm.fits(key.algorithm) else { return .wrongAlgorithm(signature: algorithm, key: key.algorithm) }
        return nil
    }

    // MARK: - Encoding

    /// The binary structure.
    public var binary: [UInt8] {
        let commentBytes = Array(unverifiedComment.utf8)
        return Self.magic + [Self.version, algorithm.rawValue, Self.hashByte(hash)] + keyID
            + bigEndian16(commentBytes.count) + commentBytes
            + bigEndian16(signature.count) + signature
    }

    /// The pasteable text form.
    public var armored: String { PEMArmor.encode(binary, label: Self.label) }

    /// Parses the armoured text form.
    /// - Throws: ``CofferFormatsError`` `.malformedSignature` naming what is wrong.
    public init(parsing text: String) throws(CofferFormatsError) {
        guard text.utf8.count <= Self.maximumFileBytes else {
            throw CofferFormatsError(.malformedSignature, "the signature file is larger than \(Self.maximumFileBytes / 1024) KiB")
        }
        let blocks: [PEMBlock]
        do {
            blocks = try PEMBlock.blocks(in: text)
        } catch {
            throw CofferFormatsError(.malformedSignature, "the signature armour is damaged: \(error.description)", underlying: error)
        }
        guard let block = blocks.first(where: { $0.label == Self.label }) else {
            let found = blocks.first.map { "a '\($0.label)' block" } ?? "no armoured block"
            throw CofferFormatsError(.malformedSignature, "expected a '-----BEGIN \(Self.label)-----' block, found \(found)")
        }
        try self.init(binary: block.der)
    }

    /// Parses the binary structure.
    public init(binary bytes: [UInt8]) throws(CofferFormatsError) {
        var reader = ByteReader(bytes: bytes[...])
        guard try reader.take(4) == Self.magic else {
            throw CofferFormatsError(.malformedSignature, "this is not a Coffer signature (bad magic)")
        }
        let version = try reader.byte()
        guard version == Self.version else {
            throw CofferFormatsError(.malformedSignature, "unsupported signature version \(version); this Coffer reads version \(Self.version)")
        }
        let algorithmByte = try reader.byte()
        guard let algorithm = Algorithm(rawValue: algorithmByte) else {
            throw CofferFormatsError(.malformedSignature, "unknown signature algorithm \(algorithmByte)")
        }
        let hashValue = try reader.byte()
        guard let hash = Self.hash(fromByte: hashValue) else {
            throw CofferFormatsError(.malformedSignature, "unknown hash \(hashValue)")
        }
        let keyID = try reader.take(8)
        let commentLength = try reader.length()
        guard commentLength <= Self.maximumCommentBytes else {
            throw CofferFormatsError(.malformedSignature, "the comment is \(commentLength) bytes, above the limit of \(Self.maximumCommentBytes)")
        }
        let commentBytes = try reader.take(commentLength)
        guard !commentBytes.contains(0), let comment = String(validating: commentBytes, as: UTF8.self) else {
            throw CofferFormatsError(.malformedSignature, "the comment is not UTF-8 text")
        }
        let signatureLength = try reader.length()
        guard (1...Self.maximumSignatureBytes).contains(signatureLength) else {
            throw CofferFormatsError(.malformedSignature, "the signature length \(signatureLength) is out of range")
        }
        let signature = try reader.take(signatureLength)
        if let fixed = algorithm.fixedLength, fixed != signatureLength {
            throw CofferFormatsError(.malformedSignature, "expected a \(fixed)-byte \(algorithm) signature, found \(signatureLength) bytes")
        }
        if (algorithm == .rsaPSS || algorithm == .rsaPKCS1v15) && !(256...1024).contains(signatureLength) {
            throw CofferFormatsError(.malformedSignature, "expected an RSA signature of 256 to 1024 bytes, found \(signatureLength)")
        }
        guard reader.bytes.isEmpty else {
            throw CofferFormatsError(.malformedSignature, "\(reader.bytes.count) unexpected bytes follow the signature")
        }
        self.init(algorithm: algorithm, hash: hash, keyID: keyID, unverifiedComment: comment, signature: signature)
    }

    /// Refuses a hash function the format cannot record.
    static func checkHash(_ hash: DigestAlgorithm) throws(CofferFormatsError) {
        guard DigestValue.signableAlgorithms.contains(hash) else {
            throw CofferFormatsError(.unsupported, "a signature file records SHA-256, SHA-384 or SHA-512, not \(hash.standardName)")
        }
    }

    static func hashByte(_ hash: DigestAlgorithm) -> UInt8 {
        switch hash {
        case .sha256: 1
        case .sha384: 2
        default: 3
        }
    }

    static func hash(fromByte byte: UInt8) -> DigestAlgorithm? {
        switch byte {
        case 1: .sha256
        case 2: .sha384
        case 3: .sha512
        default: nil
        }
    }

    private struct ByteReader {
        var bytes: ArraySlice<UInt8>

        mutating func take(_ count: Int) throws(CofferFormatsError) -> [UInt8] {
            guard bytes.count >= count else { throw CofferFormatsError(.malformedSignature, "the signature is truncated") }
            defer { bytes = bytes.dropFirst(count) }
            return Array(bytes.prefix(count))
        }

        mutating func byte() throws(CofferFormatsError) -> UInt8 { try take(1)[0] }

        mutating func length() throws(CofferFormatsError) -> Int {
            let pair = try take(2)
            return Int(pair[0]) << 8 | Int(pair[1])
        }
    }
}
