import CofferCore

/// A credential as an app finds it in storage: a proper ``PasswordHash``, or the weak legacy scheme
/// many older apps used, `hex(SHA-256(password + "." + email + "." + salt))`, kept only so that it can
/// be checked once and replaced.
///
/// The legacy form is one fast hash per guess (billions per second on a GPU), so a stolen table of them
/// is nearly as bad as plain passwords: only ``PasswordHasher/verifyInsecureLegacy(password:against:)``
/// checks it, returning a replacement scrypt hash whenever it accepts one, which the caller stores instead.
public enum StoredPassword: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// A PHC string hash.
    case hash(PasswordHash)
    /// `hex(SHA-256(password + "." + email + "." + salt))`: `email` and `salt` exactly as the old app
    /// joined them (no case folding), `hexDigest` the 64 lowercase or uppercase hex digits it stored.
    ///
    /// - Warning: insecure; accept it only to migrate.
    case insecureLegacySHA256(hexDigest: String, email: String, salt: String)

    /// Reads a stored string: a PHC string, or Coffer's spelling of a legacy record,
    /// `$sha256-legacy$salt=<base64 salt>$<hex digest>` (the email is the account it belongs to and is
    /// passed in, not stored).
    /// - Throws: ``CofferCryptoError`` `.invalidArgument` for a malformed string; given a ``description``
    ///   instead of a ``storedString``, a reason that says so.
    public init(storedString: String, email: String) throws(CofferCryptoError) {
        if storedString.trimmingPrefix(while: \.isWhitespace).hasPrefix(Self.descriptionPrefix) {
            throw CofferCryptoError(
                .invalidArgument,
                "expected a stored password string, found 'StoredPassword(…)': this is StoredPassword.description, which hides the record; use storedString to store a record and to read it back"
            )
        }
        if storedString.hasPrefix("$sha256-legacy$") {
            let fields = storedString.split(separator: "$", omittingEmptySubsequences: false)
            guard fields.count == 4, fields[2].hasPrefix("salt="), fields[3].utf8.count == 64,
                  let saltBytes = try? Base64.decode(fields[2].dropFirst(5)), let salt = String(validating: saltBytes, as: UTF8.self) else {
                throw CofferCryptoError(.invalidArgument, "expected '$sha256-legacy$salt=<base64>$<64 hex digits>'")
            }
            self = .insecureLegacySHA256(hexDigest: String(fields[3]), email: email, salt: salt)
        } else {
            self = .hash(try PasswordHash(phcString: storedString))
        }
    }

    /// The string to store (see ``init(storedString:email:)``).
    public var storedString: String {
        switch self {
        case let .hash(hash): hash.phcString
        case let .insecureLegacySHA256(hexDigest, _, salt): "$sha256-legacy$salt=\(Base64.encode(Array(salt.utf8)))$\(hexDigest)"
        }
    }

    /// What the record is, with its secrets redacted, for logs and messages: a hash's
    /// ``PasswordHash/description``, or `StoredPassword(legacy SHA-256, needs upgrade; redacted, storedString has the record)`.
    /// Not a stored form: store ``storedString``; ``init(storedString:email:)`` refuses this text.
    public var description: String {
        switch self {
        case let .hash(hash): hash.description
        case .insecureLegacySHA256: "\(Self.descriptionPrefix)legacy SHA-256, needs upgrade; redacted, storedString has the record)"
        }
    }

    /// What a legacy record's ``description`` starts with.
    static let descriptionPrefix = "StoredPassword("

    /// What `dump` and other reflection show: a hash's redacted mirror, or a legacy record's email
    /// without its digest and salt.
    public var customMirror: Mirror {
        switch self {
        case let .hash(hash): Mirror(self, children: ["hash": hash], displayStyle: .enum)
        case let .insecureLegacySHA256(_, email, _):
            Mirror(self, children: ["insecureLegacySHA256": "redacted; storedString has the record", "email": email], displayStyle: .enum)
        }
    }
}

/// The outcome of checking a password against a stored credential.
public struct PasswordVerification: Sendable {
    /// Whether the password matched.
    public let matches: Bool
    /// When the password matched but the stored credential is legacy or below the policy: a fresh hash
    /// of the same password to store in its place. `nil` otherwise.
    public let replacement: PasswordHash?
}

extension PasswordHasher {
    /// Checks a password against a stored credential under the policy's floor, and on success hands back a
    /// replacement when the hash is weaker than the policy (the transparent upgrade).
    /// - Throws: ``CofferCryptoError`` `.weakParameters` for a legacy SHA-256 record or a hash below the
    ///   floor (those verify only through ``verifyInsecureLegacy(password:against:)``), and the errors of
    ///   ``verify(password:against:)-(_,PasswordHash)``.
    public func verify(password: some StringProtocol, against stored: StoredPassword) throws(CofferCryptoError) -> PasswordVerification {
        switch stored {
        case let .hash(hash):
            try checkFloor(hash)
        case .insecureLegacySHA256:
            throw CofferCryptoError(
                .weakParameters,
                "the stored credential is the legacy SHA-256 scheme, which this policy does not verify; verify it once through the legacy path to replace it"
            )
        }
        return try verifyInsecureLegacy(password: password, against: stored)
    }

    /// The migration path: checks a password against whatever an older system stored — a legacy SHA-256
    /// record, or a PHC hash below the policy's floor of verification — and on a match returns a fresh
    /// hash to store in its place (always, for a legacy or below-policy record). Only the maximum-work
    /// caps apply.
    ///
    /// - Warning: a legacy record or a hash below the floor is cheap to guess offline; use this only to
    ///   migrate such records, storing the replacement at once.
    /// - Throws: ``CofferCryptoError`` when a stored hash asks for more work than the policy allows.
    public func verifyInsecureLegacy(password: some StringProtocol, against stored: StoredPassword) throws(CofferCryptoError) -> PasswordVerification {
        let bytes = Array(password.utf8)
        let matches: Bool
        let upgrade: Bool
        switch stored {
        case let .hash(hash):
            matches = try verifyWithinCaps(bytes, against: hash)
            upgrade = needsRehash(hash)
        case let .insecureLegacySHA256(hexDigest, email, salt):
            var digester = Digester(.sha256)
            digester.update(bytes)
            digester.update(Array(".\(email).\(salt)".utf8))
            let expected = (try? Hex.decode(hexDigest)) ?? []
            matches = expected.count == 32 && ConstantTime.equals(digester.finalize().bytes, expected)
            upgrade = true
        }
        let replacement = matches && upgrade ? try hash(passwordBytes: bytes) : nil
        return PasswordVerification(matches: matches, replacement: replacement)
    }
}
