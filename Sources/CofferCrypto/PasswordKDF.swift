import CofferCore
public import Crypto
import _CryptoExtras

/// How a password is stretched into a key: the one vocabulary every Coffer format, the keychain and the
/// password hasher map their wire encodings onto.
///
/// ```swift
/// let kdf = PasswordKDF.scrypt(logN: 17, r: 8, p: 1)
/// let key = try kdf.derive(password: Array("correct horse".utf8), salt: salt)
/// ```
///
/// Deriving goes through ``derive(password:salt:byteCount:limits:)``, which refuses parameters above its
/// ``PasswordKDFLimits`` before doing any work, so a hostile file or stored record cannot ask for
/// unbounded time or memory. Which functions a given format can record is that format's business: the
/// keychain stores scrypt only, PHC strings scrypt and PBKDF2-HMAC-SHA-256, PKCS#8 any of them.
public enum PasswordKDF: Sendable, Hashable, CustomStringConvertible {
    /// scrypt (RFC 7914) with cost N = 2^`logN`, block size `r` and parallelism `p`.
    case scrypt(logN: Int, r: Int, p: Int)
    /// PBKDF2 (RFC 8018) with this pseudorandom function and iteration count.
    case pbkdf2(PseudorandomFunction, iterations: Int)

    /// The HMAC a PBKDF2 derivation iterates.
    public enum PseudorandomFunction: Sendable, Hashable, CustomStringConvertible {
        /// HMAC-SHA-1: only to read what older formats wrote (RNCryptor v3, old PKCS#8 keys).
        case hmacSHA1
        /// HMAC-SHA-256: what Coffer writes.
        case hmacSHA256
        /// HMAC-SHA-512.
        case hmacSHA512

        /// `SHA1`, `SHA256` or `SHA512`, as in "PBKDF2-HMAC-SHA256".
        public var description: String {
            switch self {
            case .hmacSHA1: "SHA1"
            case .hmacSHA256: "SHA256"
            case .hmacSHA512: "SHA512"
            }
        }

        /// The size of the function's output, in bytes: PBKDF2 runs every iteration once for each block
        /// of this size it derives.
        public var blockByteCount: Int {
            switch self {
            case .hmacSHA1: 20
            case .hmacSHA256: 32
            case .hmacSHA512: 64
            }
        }

        var hashFunction: KDF.Insecure.PBKDF2.HashFunction {
            switch self {
            case .hmacSHA1: .insecureSHA1
            case .hmacSHA256: .sha256
            case .hmacSHA512: .sha512
            }
        }
    }

    /// PBKDF2-HMAC-SHA-256 with this many iterations.
    public static func pbkdf2(iterations: Int) -> PasswordKDF { .pbkdf2(.hmacSHA256, iterations: iterations) }

    /// scrypt at N = 2^17, r = 8, p = 1: 128 MiB and about half a second here. What Coffer uses for new
    /// encrypted files, keychains and password hashes unless told otherwise.
    public static let `default` = PasswordKDF.scrypt(logN: 17, r: 8, p: 1)

    /// The fewest PBKDF2 iterations Coffer uses for any new secret — an encrypted file, an encrypted
    /// private key, a password hash: 600,000, OWASP's 2023 figure for PBKDF2-HMAC-SHA-256. One floor
    /// for every format; reading accepts what others wrote, within the reader's ``PasswordKDFLimits``.
    public static let minimumPBKDF2Iterations = 600_000

    /// `scrypt (N=2^17, r=8, p=1)` or `PBKDF2-HMAC-SHA256 (600000 iterations)`.
    public var description: String {
        switch self {
        case let .scrypt(logN, r, p): "scrypt (N=2^\(logN), r=\(r), p=\(p))"
        case let .pbkdf2(prf, iterations): "PBKDF2-HMAC-\(prf) (\(iterations) iterations)"
        }
    }

    /// The memory a derivation needs in bytes: 128·N·r for scrypt, 0 for PBKDF2; nil when it does not
    /// fit in an `Int` (as a hostile header may ask), which no limit admits.
    public var memoryCost: Int? {
        switch self {
        case let .scrypt(logN, r, _):
            guard (0..<(Int.bitWidth - 8)).contains(logN), r >= 0 else { return nil }
            let (memory, overflow) = (128 << logN).multipliedReportingOverflow(by: r)
            return overflow ? nil : memory
        case .pbkdf2:
            return 0
        }
    }

    /// The work a derivation does, which its time follows: N·r·p for scrypt (each of the p lanes mixes
    /// N blocks of 128·r bytes twice), the iteration count for PBKDF2 whatever its hash; nil when it does
    /// not fit in an `Int` (as a hostile header may ask), which no limit admits.
    public var workCost: Int? {
        switch self {
        case let .scrypt(logN, r, p):
            guard (0..<(Int.bitWidth - 1)).contains(logN), r >= 0, p >= 0 else { return nil }
            let (blocks, overflow) = (1 << logN).multipliedReportingOverflow(by: r)
            guard !overflow else { return nil }
            let (work, overflowed) = blocks.multipliedReportingOverflow(by: p)
            return overflowed ? nil : work
        case let .pbkdf2(_, iterations):
            return iterations
        }
    }

    /// Derives `byteCount` bytes from `password` and `salt`, after checking the parameters against
    /// `limits`: nothing is computed for parameters the limits refuse.
    ///
    /// - Parameters:
    ///   - password: The password's bytes (UTF-8 for text).
    ///   - salt: The salt recorded beside the derived key.
    ///   - byteCount: How many bytes to derive, 1 to 1024.
    ///   - limits: The most work the caller agrees to do; the default admits every cost Coffer writes.
    /// - Returns: The derived key, wiped from memory when released.
    /// - Throws: ``CofferCryptoError`` `.costTooHigh` for parameters above `limits`, `.invalidArgument`
    ///   for parameters no implementation honours (scrypt log2 N outside 1...40, r or p or an
    ///   iteration count below 1, a byte count outside 1...1024), `.cryptographicFailure` when
    ///   swift-crypto refuses.
    public func derive(
        password: [UInt8],
        salt: [UInt8],
        byteCount: Int = 32,
        limits: PasswordKDFLimits = PasswordKDFLimits()
    ) throws(CofferCryptoError) -> SymmetricKey {
        try limits.check(self, deriving: byteCount)
        try checkShape()
        guard (1...1024).contains(byteCount) else {
            throw CofferCryptoError(.invalidArgument, "expected to derive 1 to 1024 bytes, found \(byteCount)")
        }
        do {
            switch self {
            case let .scrypt(logN, r, p):
                return try KDF.Scrypt.deriveKey(
                    from: password, salt: salt, outputByteCount: byteCount, rounds: 1 << logN, blockSize: r, parallelism: p
                )
            case let .pbkdf2(prf, iterations):
                return try KDF.Insecure.PBKDF2.deriveKey(
                    from: password, salt: salt, using: prf.hashFunction, outputByteCount: byteCount, unsafeUncheckedRounds: iterations
                )
            }
        } catch {
            throw CofferCryptoError(.cryptographicFailure, "\(self) failed", underlying: error)
        }
    }

    /// Refuses parameters that no implementation could honour, whatever the limits.
    private func checkShape() throws(CofferCryptoError) {
        switch self {
        case let .scrypt(logN, r, p):
            guard (1...40).contains(logN), r >= 1, p >= 1 else {
                throw CofferCryptoError(
                    .invalidArgument, "scrypt needs log2 N from 1 to 40 and r, p of at least 1; found log2 N \(logN), r \(r), p \(p)"
                )
            }
        case let .pbkdf2(_, iterations):
            guard iterations >= 1 else {
                throw CofferCryptoError(.invalidArgument, "PBKDF2 needs at least one iteration, found \(iterations)")
            }
        }
    }

    /// Refuses parameters too weak for a new secret: PBKDF2 below ``minimumPBKDF2Iterations`` or over
    /// HMAC-SHA-1. Formats call this when they write, never when they read.
    /// - Throws: ``CofferCryptoError`` `.weakParameters`.
    public func checkStrengthForNewSecret() throws(CofferCryptoError) {
        guard case let .pbkdf2(prf, iterations) = self else { return }
        guard prf != .hmacSHA1 else {
            throw CofferCryptoError(.weakParameters, "PBKDF2-HMAC-SHA1 is for reading old files only; new secrets use HMAC-SHA256 or scrypt")
        }
        guard iterations >= Self.minimumPBKDF2Iterations else {
            throw CofferCryptoError(
                .weakParameters, "expected at least \(Self.minimumPBKDF2Iterations) PBKDF2 iterations for a new secret, found \(iterations)"
            )
        }
    }
}

/// The most work a reader agrees to do for a password before knowing whether it is right, so that a
/// hostile header or stored record costs little: it bounds memory **and** time. One set of limits for
/// every format: encrypted files, legacy formats, encrypted private keys, password hashes, keychain
/// imports.
///
/// The defaults admit exactly the costs of scrypt N = 2^19, r = 8, p = 1 (512 MiB, four times the work
/// of ``PasswordKDF/default``) however a header splits them between N, r and p, and 2,000,000 PBKDF2
/// iterations whatever the hash (HMAC-SHA-512, the slowest here, then costs about as much as that
/// scrypt): every cost Coffer's writers make (they refuse to make more) and every default of the
/// formats' other writers (OpenSSL, age, RNCryptor, passlib). The worst input they accept costs about
/// four default derivations (docs/SECURITY.md gives the figures measured); before the work was
/// counted, a 162-byte file asking for N = 2^20, r = 8, p = 255 cost about 2,000, and a key asking for
/// 10,000,000 PBKDF2-HMAC-SHA-512 iterations about 19. A caller who trusts an input that asks for more
/// passes larger limits (``PasswordKDFLimits/init(scryptUpToLogN:pbkdf2Iterations:)``).
public struct PasswordKDFLimits: Sendable, Hashable {
    /// Largest scrypt log2 N accepted (19 by default).
    public var maximumScryptLogN: Int
    /// Largest scrypt memory accepted, 128·N·r bytes (512 MiB by default).
    public var maximumScryptMemory: Int
    /// Most scrypt work accepted, N·r·p (``PasswordKDF/workCost``): 2^22 by default, the work of
    /// N = 2^19 at r = 8, p = 1. Time follows it: p lanes cost p times one lane's time whatever memory
    /// they share.
    public var maximumScryptWork: Int
    /// Most PBKDF2 iterations accepted, whatever the hash (2,000,000 by default), counted for each block
    /// of the hash's size derived (``check(_:deriving:subject:)``).
    public var maximumPBKDF2Iterations: Int

    /// Limits; the defaults accept every cost Coffer and the formats' other writers make by default and
    /// refuse the costs a hostile file might ask for.
    /// - Parameters:
    ///   - maximumScryptLogN: Largest scrypt log2 N accepted.
    ///   - maximumScryptMemory: Largest scrypt memory accepted, in bytes.
    ///   - maximumScryptWork: Most scrypt work accepted, N·r·p.
    ///   - maximumPBKDF2Iterations: Most PBKDF2 iterations accepted.
    public init(
        maximumScryptLogN: Int = 19,
        maximumScryptMemory: Int = 1 << 29,
        maximumScryptWork: Int = 1 << 22,
        maximumPBKDF2Iterations: Int = 2_000_000
    ) {
        self.maximumScryptLogN = maximumScryptLogN
        self.maximumScryptMemory = maximumScryptMemory
        self.maximumScryptWork = maximumScryptWork
        self.maximumPBKDF2Iterations = maximumPBKDF2Iterations
    }

    /// Limits that admit scrypt up to N = 2^`logN` at r = 8, p = 1, and the same memory and work split
    /// any other way (128·N·r up to 1 KiB·2^`logN`, N·r·p up to 8·2^`logN`), with `pbkdf2Iterations`:
    /// the one knob for callers who trust an input that asks for more than the defaults (which are
    /// `logN` 19 and 2,000,000 iterations). Lower values lower the limits.
    /// - Parameters:
    ///   - logN: log2 of the largest N accepted at r = 8, p = 1; 1 to 40.
    ///   - pbkdf2Iterations: Most PBKDF2 iterations accepted.
    public init(scryptUpToLogN logN: Int, pbkdf2Iterations: Int = 2_000_000) {
        let exponent = min(max(logN, 1), 40)
        self.init(
            maximumScryptLogN: exponent,
            maximumScryptMemory: 1024 << exponent,
            maximumScryptWork: 8 << exponent,
            maximumPBKDF2Iterations: pbkdf2Iterations
        )
    }

    /// No practical limit: for parameters the caller chose itself (a benchmark, a format whose own
    /// ranges bound the cost), never for parameters read from input.
    public static let unbounded = PasswordKDFLimits(
        maximumScryptLogN: 40, maximumScryptMemory: .max, maximumScryptWork: .max, maximumPBKDF2Iterations: .max
    )

    /// Whether these limits admit `kdf`, without saying why not (``check(_:deriving:subject:)`` does).
    public func admits(_ kdf: PasswordKDF) -> Bool {
        (try? check(kdf)) != nil
    }

    /// Whether these limits admit `kdf`. Nothing is derived: a caller checks before it derives.
    /// - Parameters:
    ///   - kdf: The parameters to check, typically read from input.
    ///   - byteCount: How many bytes will be derived, when known: PBKDF2's iterations are counted once
    ///     for each block of its hash's size (64 bytes of PBKDF2-HMAC-SHA256 are two blocks, twice the
    ///     work); nil counts one block.
    ///   - subject: What asks for them, for the error's reason: "the file", "the stored hash".
    /// - Throws: ``CofferCryptoError`` `.costTooHigh`, saying what was asked (scrypt's memory and its
    ///   work N·r·p, or the iteration count for each output block) and each limit it is above: N
    ///   (``maximumScryptLogN``), memory (``maximumScryptMemory``), work (``maximumScryptWork``) or
    ///   iterations (``maximumPBKDF2Iterations``). The message speaks of the limits, not of the
    ///   properties, so that a command line can show it as it is.
    public func check(_ kdf: PasswordKDF, deriving byteCount: Int? = nil, subject: String = "the derivation") throws(CofferCryptoError) {
        switch kdf {
        case let .scrypt(logN, r, p):
            let memory = kdf.memoryCost
            let work = kdf.workCost
            var above: [String] = []
            if logN > maximumScryptLogN { above.append("N=2^\(maximumScryptLogN)") }
            if memory.map({ $0 > maximumScryptMemory }) ?? true {
                above.append("\(maximumScryptMemory >> 20) MiB of memory")
            }
            if work.map({ $0 > maximumScryptWork }) ?? true {
                above.append("work \(maximumScryptWork)")
            }
            guard !above.isEmpty else { return }
            let needs = memory.map { "\($0 >> 20) MiB" } ?? "more memory than any machine has"
            let does = work.map { "work N·r·p = \($0)" } ?? "more work than any machine does"
            throw CofferCryptoError(
                .costTooHigh,
                "\(subject) asks for scrypt N=2^\(logN), r=\(r), p=\(p) (\(needs), \(does)), above the limit of \(above.joined(separator: " and "))"
            )
        case let .pbkdf2(prf, iterations):
            let blocks = byteCount.map { Swift.max(1, ($0 + prf.blockByteCount - 1) / prf.blockByteCount) } ?? 1
            let (work, overflow) = iterations.multipliedReportingOverflow(by: blocks)
            guard !overflow, work <= maximumPBKDF2Iterations else {
                let asked = blocks == 1
                    ? "\(iterations) PBKDF2 iterations"
                    : "\(iterations) PBKDF2 iterations for each of \(blocks) output blocks (\(overflow ? "more than any machine does" : String(work)) in all)"
                throw CofferCryptoError(.costTooHigh, "\(subject) asks for \(asked), above the limit of \(maximumPBKDF2Iterations)")
            }
        }
    }
}
