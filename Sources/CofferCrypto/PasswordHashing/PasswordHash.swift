import CofferCore

/// A stored password verifier in the PHC string format (docs/PASSWORD-HASHING.md), for example
/// `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` or `$pbkdf2-sha256$i=600000$<salt>$<hash>`.
///
/// Parsing enforces limits, so a hostile string cannot ask for unbounded work or memory: the cost caps
/// of ``PasswordHashPolicy`` apply when verifying.
///
/// ``phcString`` is the one spelling to store, send and parse back with ``init(phcString:)``.
/// ``description`` (what `print`, string interpolation and logs show) names the algorithm and cost and
/// says that the salt and hash are redacted: the hash is offline-attack material, so it never appears
/// there, nor in `dump`. The description contains no `$` and cannot be taken for a hash:
/// `PasswordHash(phcString: hash.description)` throws, saying to use ``phcString``.
///
/// ```swift
/// let stored = try PasswordHasher().hash(password: password).phcString   // "$scrypt$ln=17,r=8,p=1$…"
/// let hash = try PasswordHash(phcString: stored)
/// print(hash)   // PasswordHash(scrypt (N=2^17, r=8, p=1), salt and hash redacted; phcString is the string to store)
/// ```
public struct PasswordHash: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The key-derivation function and its cost: scrypt, or PBKDF2 over HMAC-SHA-256 (the two a PHC
    /// string Coffer reads or writes can name).
    public let kdf: PasswordKDF
    /// The random salt (16 bytes when Coffer made the hash; up to 64 accepted, shorter than 16 only for
    /// verification and migration: ``PasswordHasher/needsRehash(_:)`` reports it).
    public let salt: [UInt8]
    /// The derived bytes compared on verification (32 when Coffer made the hash; 16 to 64 accepted).
    let hash: [UInt8]

    /// The salt sizes accepted when parsing, and the hash sizes.
    static let saltSizes = 0...64
    static let hashSizes = 16...64

    init(kdf: PasswordKDF, salt: [UInt8], hash: [UInt8]) {
        self.kdf = kdf
        self.salt = salt
        self.hash = hash
    }

    /// Parses a PHC string, as ``phcString`` writes it. Also accepts passlib's PBKDF2 form
    /// (`$pbkdf2-sha256$29000$<ab64 salt>$<ab64 hash>`) so that credentials hashed by Python services
    /// verify here unchanged.
    /// - Throws: ``CofferCryptoError`` `.invalidArgument` naming what was malformed; never echoes the hash.
    ///   Given a hash's ``description`` instead of its ``phcString``, the reason says exactly that: "this
    ///   is PasswordHash.description, which hides the hash; use phcString".
    public init(phcString: String) throws(CofferCryptoError) {
        guard phcString.utf8.count <= 512 else {
            throw CofferCryptoError(.invalidArgument, "a password hash string is at most 512 characters, found \(phcString.utf8.count)")
        }
        if Self.isDescription(phcString) {
            throw CofferCryptoError(
                .invalidArgument,
                "expected a PHC string '$<algorithm>$<parameters>$<salt>$<hash>', found 'PasswordHash(…)': this is PasswordHash.description, which hides the hash; use phcString to store a hash and to read it back"
            )
        }
        let fields = phcString.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty else {
            throw CofferCryptoError(.invalidArgument, "expected a PHC string '$<algorithm>$<parameters>$<salt>$<hash>', found \(fields.count - 1) fields")
        }
        let identifier = String(fields[1])
        let parameters = String(fields[2])
        switch identifier {
        case "scrypt":
            let values = try Self.parameters(parameters, names: ["ln", "r", "p"])
            kdf = .scrypt(logN: values[0], r: values[1], p: values[2])
            salt = try Self.decodeB64(fields[3], what: "salt", sizes: Self.saltSizes)
            hash = try Self.decodeB64(fields[4], what: "hash", sizes: Self.hashSizes)
        case "pbkdf2-sha256":
            if let iterations = Self.decimal(parameters[...]) {
                // passlib: bare iteration count, "adapted base64" ('.' for '+').
                kdf = .pbkdf2(iterations: iterations)
                salt = try Self.decodeB64(fields[3].replacingDots(), what: "salt", sizes: Self.saltSizes)
                hash = try Self.decodeB64(fields[4].replacingDots(), what: "hash", sizes: Self.hashSizes)
            } else {
                let values = try Self.parameters(parameters, names: ["i"])
                kdf = .pbkdf2(iterations: values[0])
                salt = try Self.decodeB64(fields[3], what: "salt", sizes: Self.saltSizes)
                hash = try Self.decodeB64(fields[4], what: "hash", sizes: Self.hashSizes)
            }
        default:
            throw CofferCryptoError(
                .unknownAlgorithm,
                "unknown password hash algorithm '\(identifier.clipped(toUTF8: 32))'; expected scrypt or pbkdf2-sha256"
            )
        }
        try Self.checkShape(kdf)
    }

    /// The PHC string to store: `$scrypt$ln=…,r=…,p=…$salt$hash` or `$pbkdf2-sha256$i=…$salt$hash`, with
    /// salt and hash in unpadded standard base64.
    public var phcString: String {
        let parameters: String
        let identifier: String
        switch kdf {
        case let .scrypt(logN, r, p):
            identifier = "scrypt"
            parameters = "ln=\(logN),r=\(r),p=\(p)"
        case let .pbkdf2(_, iterations):
            // Only HMAC-SHA-256 is ever stored here: parsing makes nothing else and hashing refuses it.
            identifier = "pbkdf2-sha256"
            parameters = "i=\(iterations)"
        }
        return "$\(identifier)$\(parameters)$\(Self.encodeB64(salt))$\(Self.encodeB64(hash))"
    }

    /// The algorithm and cost, with the salt and hash redacted, for logs and messages: for example
    /// `PasswordHash(scrypt (N=2^17, r=8, p=1), salt and hash redacted; phcString is the string to store)`.
    ///
    /// Not a stored form: store ``phcString``. This text has no `$`, so no PHC parser takes it for a hash,
    /// and ``init(phcString:)`` refuses it with a reason that names ``phcString``.
    public var description: String { "\(Self.descriptionPrefix)\(kdf), salt and hash redacted; phcString is the string to store)" }

    /// What ``description`` starts with, and what ``init(phcString:)`` recognises it by.
    static let descriptionPrefix = "PasswordHash("

    /// Whether `text` is a ``description`` (surrounding whitespace aside), not a PHC string.
    static func isDescription(_ text: String) -> Bool {
        text.trimmingPrefix(while: \.isWhitespace).hasPrefix(descriptionPrefix)
    }

    /// What `dump` and other reflection show: the algorithm and cost, the salt and hash redacted, as in
    /// ``description``.
    public var customMirror: Mirror {
        Mirror(self, children: ["kdf": kdf, "salt and hash": "redacted; phcString has them"], displayStyle: .struct)
    }

    /// Parameters in the given order, each `name=value` with a decimal value.
    private static func parameters(_ text: String, names: [String]) throws(CofferCryptoError) -> [Int] {
        let pairs = text.split(separator: ",", omittingEmptySubsequences: false)
        guard pairs.count == names.count else {
            throw CofferCryptoError(.invalidArgument, "expected the parameters \(names.joined(separator: ",")), found '\(text.clipped(toUTF8: 64))'")
        }
        var values: [Int] = []
        for (pair, name) in zip(pairs, names) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name, let value = decimal(parts[1]) else {
                throw CofferCryptoError(.invalidArgument, "expected the parameter '\(name)=<number>', found '\(pair.clipped(toUTF8: 32))'")
            }
            values.append(value)
        }
        return values
    }

    /// A parameter value: 1 to 10 ASCII digits, no sign (the same rule for every form, so that what is
    /// read can always be written back and read again).
    private static func decimal(_ text: Substring) -> Int? {
        guard (1...10).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    /// Rejects parameters no implementation could honour and functions a PHC string cannot name (the
    /// policy's limits are checked on use).
    static func checkShape(_ kdf: PasswordKDF) throws(CofferCryptoError) {
        switch kdf {
        case let .scrypt(logN, r, p):
            guard (1...30).contains(logN), (1...64).contains(r), (1...64).contains(p) else {
                throw CofferCryptoError(.invalidArgument, "scrypt parameters out of range: ln=\(logN) (1–30), r=\(r) (1–64), p=\(p) (1–64)")
            }
        case let .pbkdf2(prf, iterations):
            guard prf == .hmacSHA256 else {
                throw CofferCryptoError(.invalidArgument, "a PHC password hash names scrypt or PBKDF2-HMAC-SHA256, not PBKDF2-HMAC-\(prf)")
            }
            guard iterations >= 1 else {
                throw CofferCryptoError(.invalidArgument, "PBKDF2 needs at least one iteration, found \(iterations)")
            }
        }
    }

    static func encodeB64(_ bytes: [UInt8]) -> String {
        var text = Base64.encode(bytes)
        while text.last == "=" { text.removeLast() }
        return text
    }

    private static func decodeB64(_ text: some StringProtocol, what: String, sizes: ClosedRange<Int>) throws(CofferCryptoError) -> [UInt8] {
        let padded = String(text) + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        let bytes: [UInt8]
        do {
            bytes = try Base64.decode(padded)
        } catch {
            throw CofferCryptoError(.invalidArgument, "the \(what) of a password hash is not unpadded base64: \(error.reason)", underlying: error)
        }
        guard sizes.contains(bytes.count) else {
            throw CofferCryptoError(.invalidArgument, "a password hash's \(what) must be \(sizes.lowerBound)–\(sizes.upperBound) bytes, found \(bytes.count)")
        }
        return bytes
    }
}

extension Substring {
    fileprivate func replacingDots() -> String { String(map { $0 == "." ? "+" : $0 }) }
}
