import CofferCore
import Crypto

/// What a ``PasswordHasher`` makes, what it still accepts without asking for a rehash, the least work a
/// stored hash must have cost to be verified at all, and the most work a stored hash may ask of it.
public struct PasswordHashPolicy: Sendable, Hashable {
    /// The key-derivation function and cost new hashes use: scrypt, or PBKDF2 over HMAC-SHA-256.
    public var kdf: PasswordKDF
    /// Hashes cheaper than these verify but report ``PasswordHasher/needsRehash(_:)``.
    public var minimumScryptLogN: Int
    /// See ``minimumScryptLogN``.
    public var minimumPBKDF2Iterations: Int
    /// The floor of verification: a stored scrypt hash cheaper than N = 2^this is refused by
    /// ``PasswordHasher/verify(password:against:)-(_,PasswordHash)`` rather than trusted (14 by default).
    /// A record that cheap to guess is no protection; it verifies only through the explicitly named
    /// migration path, ``PasswordHasher/verifyInsecureLegacy(password:against:)``, which replaces it.
    public var minimumVerifiableScryptLogN: Int
    /// The floor of verification for PBKDF2 (100,000 iterations by default); see ``minimumVerifiableScryptLogN``.
    public var minimumVerifiablePBKDF2Iterations: Int
    /// The most work a stored hash may ask for: above these limits it is refused rather than computed,
    /// so a hostile or corrupted record cannot stall the server (scrypt at 2^21 with r=8 takes 2 GiB; at
    /// 2^20 with p=64, 128 times the time of the largest cost admitted). ``PasswordHashPolicy/kdf`` must be within them too.
    public var limits: PasswordKDFLimits

    /// scrypt at N=2^17, r=8, p=1 (128 MiB, about 0.3 s here) for new hashes; at least that, or PBKDF2 at
    /// 600,000 iterations, before ``PasswordHasher/needsRehash(_:)`` says no; nothing below scrypt 2^14 or
    /// 100,000 PBKDF2 iterations is verified (but through the legacy path), and nothing above the default
    /// ``PasswordKDFLimits`` (the memory and work of scrypt 2^19 at r=8, p=1; 2,000,000 iterations) is computed.
    public static let standard = PasswordHashPolicy(kdf: .default)

    /// A policy with every field given.
    /// - Parameters:
    ///   - kdf: The function and cost new hashes use.
    ///   - minimumScryptLogN: The scrypt cost below which a verified hash needs a rehash.
    ///   - minimumPBKDF2Iterations: The PBKDF2 cost below which a verified hash needs a rehash.
    ///   - minimumVerifiableScryptLogN: The scrypt cost below which a hash is refused, not verified.
    ///   - minimumVerifiablePBKDF2Iterations: The PBKDF2 cost below which a hash is refused, not verified.
    ///   - limits: The most work a stored hash may ask for.
    public init(
        kdf: PasswordKDF,
        minimumScryptLogN: Int = 17,
        minimumPBKDF2Iterations: Int = PasswordKDF.minimumPBKDF2Iterations,
        minimumVerifiableScryptLogN: Int = 14,
        minimumVerifiablePBKDF2Iterations: Int = 100_000,
        limits: PasswordKDFLimits = PasswordKDFLimits()
    ) {
        self.kdf = kdf
        self.minimumScryptLogN = minimumScryptLogN
        self.minimumPBKDF2Iterations = minimumPBKDF2Iterations
        self.minimumVerifiableScryptLogN = minimumVerifiableScryptLogN
        self.minimumVerifiablePBKDF2Iterations = minimumVerifiablePBKDF2Iterations
        self.limits = limits
    }
}

/// Hashes passwords for storage and checks them later: never stores or logs the password, compares
/// in constant time, and tells when a stored hash is weaker than the policy so it can be replaced on the
/// next successful sign-in.
///
/// ```swift
/// let hasher = PasswordHasher()
/// let stored = try hasher.hash(password: "correct horse").phcString
/// if try hasher.verify(password: "correct horse", against: PasswordHash(phcString: stored)) { … }
/// ```
public struct PasswordHasher: Sendable {
    /// The policy this hasher applies.
    public let policy: PasswordHashPolicy

    /// A hasher with ``PasswordHashPolicy/standard`` unless told otherwise.
    public init(policy: PasswordHashPolicy = .standard) {
        self.policy = policy
    }

    /// Hashes a password with the policy's algorithm and a fresh 16-byte salt.
    /// - Throws: ``CofferCryptoError`` when the policy's algorithm is weaker than its own minimum (a
    ///   misconfiguration), `.costTooHigh` when it costs more than the policy's
    ///   ``PasswordHashPolicy/limits`` let ``verify(password:against:)-(_,PasswordHash)`` compute (nothing is derived then), or the KDF refuses its parameters.
    public func hash(password: some StringProtocol) throws(CofferCryptoError) -> PasswordHash {
        try hash(passwordBytes: Array(password.utf8))
    }

    /// Hashes a password given as UTF-8 bytes.
    public func hash(passwordBytes password: [UInt8]) throws(CofferCryptoError) -> PasswordHash {
        try PasswordHash.checkShape(policy.kdf)
        guard !isBelowPolicy(policy.kdf) else {
            throw CofferCryptoError(.invalidArgument, "the policy makes \(policy.kdf) hashes, weaker than its own minimum")
        }
        // A hash this policy's own verification would refuse is never made.
        let salt = try SecureRandom.bytes(count: 16)
        let derived = try derive(password, salt: salt, kdf: policy.kdf, byteCount: 32, subject: "the policy's new hash")
        return PasswordHash(kdf: policy.kdf, salt: salt, hash: derived)
    }

    /// Whether `password` is the one `stored` was made from. Constant time in the comparison; the
    /// KDF's time depends only on the stored parameters.
    /// - Throws: ``CofferCryptoError`` `.costTooHigh` when the stored hash asks for more work than the
    ///   policy's ``PasswordHashPolicy/limits`` (it is then not computed at all), and `.weakParameters` when it cost less
    ///   than the policy's floor (``PasswordHashPolicy/minimumVerifiableScryptLogN``): such a hash is
    ///   refused, not trusted; a record from an old system verifies only through
    ///   ``verifyInsecureLegacy(password:against:)``, which replaces it.
    public func verify(password: some StringProtocol, against stored: PasswordHash) throws(CofferCryptoError) -> Bool {
        try verify(passwordBytes: Array(password.utf8), against: stored)
    }

    /// ``verify(password:against:)-(_,PasswordHash)`` for a password given as UTF-8 bytes.
    public func verify(passwordBytes password: [UInt8], against stored: PasswordHash) throws(CofferCryptoError) -> Bool {
        try checkFloor(stored)
        return try verifyWithinCaps(password, against: stored)
    }

    /// Refuses a stored hash cheaper than the policy's floor of verification.
    func checkFloor(_ stored: PasswordHash) throws(CofferCryptoError) {
        switch stored.kdf {
        case let .scrypt(logN, _, _) where logN < policy.minimumVerifiableScryptLogN:
            throw CofferCryptoError(
                .weakParameters,
                "the stored hash uses scrypt N=2^\(logN), below the 2^\(policy.minimumVerifiableScryptLogN) this policy verifies: a hash that cheap to guess is refused, not trusted; verify it once through the legacy path to replace it"
            )
        case let .pbkdf2(_, iterations) where iterations < policy.minimumVerifiablePBKDF2Iterations:
            throw CofferCryptoError(
                .weakParameters,
                "the stored hash uses \(iterations) PBKDF2 iteration\(iterations == 1 ? "" : "s"), below the \(policy.minimumVerifiablePBKDF2Iterations) this policy verifies: a hash that cheap to guess is refused, not trusted; verify it once through the legacy path to replace it"
            )
        default:
            break
        }
    }

    /// The comparison, within the policy's limits; no floor.
    func verifyWithinCaps(_ password: [UInt8], against stored: PasswordHash) throws(CofferCryptoError) -> Bool {
        var derived = try derive(password, salt: stored.salt, kdf: stored.kdf, byteCount: stored.hash.count)
        defer { SecretBytes.wipe(&derived) }
        return ConstantTime.equals(derived, stored.hash)
    }

    /// Whether a hash that verified should be replaced with a fresh one: its cost is below the policy's
    /// minimum, or it uses another algorithm than the policy's (PBKDF2 when the policy makes scrypt).
    public func needsRehash(_ stored: PasswordHash) -> Bool {
        if isBelowPolicy(stored.kdf) { return true }
        switch (stored.kdf, policy.kdf) {
        case (.scrypt, .scrypt), (.pbkdf2, .pbkdf2): return stored.hash.count < 32 || stored.salt.count < 16
        default: return true
        }
    }

    private func isBelowPolicy(_ kdf: PasswordKDF) -> Bool {
        switch kdf {
        case let .scrypt(logN, r, _): logN < policy.minimumScryptLogN || r < 8
        case let .pbkdf2(_, iterations): iterations < policy.minimumPBKDF2Iterations
        }
    }

    /// `byteCount` bytes of `kdf`, within the policy's limits: a stored hash above them is refused, and
    /// a new one is not made, since this policy would refuse to verify it.
    private func derive(
        _ password: [UInt8], salt: [UInt8], kdf: PasswordKDF, byteCount: Int, subject: String = "the stored hash"
    ) throws(CofferCryptoError) -> [UInt8] {
        let limits = policy.limits
        try limits.check(kdf, deriving: byteCount, subject: subject)
        return try kdf.derive(password: password, salt: salt, byteCount: byteCount, limits: limits).withUnsafeBytes { Array($0) }
    }
}
