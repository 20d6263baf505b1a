import CofferCore

extension EncryptedFileHeader {
    /// One way the file key is wrapped: a type byte and a body (docs/FORMAT-ENCRYPTION.md, "Stanzas").
    ///
    /// The header parser reads every stanza the same way (type, 2-byte length, body) and checks the
    /// body of each registered type with that type's own rules (its length, its parameters); the
    /// ``FileKeyIdentity`` of that type parses the body again when it unwraps. Types 0xF0 to 0xFF
    /// (``privateUseTypes``) are read as opaque recipient stanzas; any other unregistered type is refused.
    public struct Stanza: Sendable, Hashable {
        /// The stanza type: 1 scrypt, 2 PBKDF2, 3 key, 4 X25519, 5 P-256, 0xF0 to 0xFF private use.
        public let type: UInt8
        /// The body: the type's parameters, then its wrapped or sealed file key.
        public let body: [UInt8]

        /// A stanza as a recipient writes it. The engine refuses to write one whose body is over
        /// ``EncryptedFileHeader/maximumStanzaBody`` or whose type is neither registered nor private use.
        public init(type: UInt8, body: [UInt8]) {
            self.type = type
            self.body = body
        }

        /// Types a reader accepts without knowing them, for private use and tests: 0xF0 to 0xFF. Coffer
        /// never registers them; such a stanza never stands alone, and only an identity that knows the
        /// type opens it.
        public static let privateUseTypes: ClosedRange<UInt8> = 0xF0...0xFF

        /// A line for `coffer inspect`: the registered type's own description ("password, scrypt …",
        /// "X25519 recipient, key id …"), or the type number and size of a private-use stanza.
        public var summary: String {
            if let rules = StanzaRules.registered(type) { return rules.summary(body) }
            let kind = Self.privateUseTypes.contains(type) ? "private-use" : "unknown"
            return "\(kind) stanza type 0x\(Hex.encode([type])), \(body.count) bytes"
        }

        /// Whether the stanza must be the file's only one (a password or a key stanza).
        public var standsAlone: Bool { StanzaRules.registered(type)?.standsAlone ?? false }

        /// The stanza as written: type, 2-byte big-endian length, body.
        var encoded: [UInt8] { [type] + bigEndian16(body.count) + body }

        /// Checks the body by its type's rules, throwing `code` (`.malformedCiphertext` when reading,
        /// `.invalidArgument` when a recipient wrote it).
        func validate(as code: CofferFormatsError.Code = .malformedCiphertext) throws(CofferFormatsError) {
            guard body.count <= EncryptedFileHeader.maximumStanzaBody else {
                throw CofferFormatsError(code, "a key stanza of \(body.count) bytes exceeds the limit of \(EncryptedFileHeader.maximumStanzaBody)")
            }
            if let rules = StanzaRules.registered(type) {
                do {
                    try rules.validate(body)
                } catch {
                    throw CofferFormatsError(code, error.reason)
                }
            } else if !Self.privateUseTypes.contains(type) {
                throw CofferFormatsError(code, "unknown key stanza type \(type)")
            }
        }

        /// A file holds one password, or one key, or recipients only: a stanza that stands alone is the
        /// only stanza.
        static func checkMix(_ stanzas: [Self], as code: CofferFormatsError.Code = .malformedCiphertext) throws(CofferFormatsError) {
            guard stanzas.count == 1 || !stanzas.contains(where: \.standsAlone) else {
                throw CofferFormatsError(code, "the header mixes ways of opening the file; it must hold one password, one key, or recipients only")
            }
        }

        /// Refuses a body of another length than its type's, in the words every stanza type uses.
        static func requireLength(_ body: [UInt8], _ length: Int, _ name: String) throws(CofferFormatsError) {
            guard body.count == length else {
                throw CofferFormatsError(.malformedCiphertext, "a \(name) stanza must be \(length) bytes, found \(body.count)")
            }
        }
    }
}

/// What the header parser and `coffer inspect` know of a registered stanza type. Each type's rules live
/// in its recipient's file; this is the registry of the numbers the format has taken.
struct StanzaRules: Sendable {
    /// The type byte.
    let type: UInt8
    /// Whether a stanza of this type must be the file's only one.
    let standsAlone: Bool
    /// Parses the body, throwing `.malformedCiphertext` for a wrong length or parameter.
    let validate: @Sendable ([UInt8]) throws(CofferFormatsError) -> Void
    /// The `coffer inspect` line of a valid body.
    let summary: @Sendable ([UInt8]) -> String

    /// The registered types (docs/FORMAT-ENCRYPTION.md, "Stanza types"). A new registered type adds
    /// its rules here; a private-use type (0xF0 to 0xFF) needs nothing.
    static let all: [StanzaRules] = [
        PasswordRecipient.scryptRules, PasswordRecipient.pbkdf2Rules, EncryptionKey.stanzaRules,
        X25519Recipient.stanzaRules, P256Recipient.stanzaRules,
    ]

    /// The rules of `type`, or `nil` for an unregistered type.
    static func registered(_ type: UInt8) -> StanzaRules? { all.first { $0.type == type } }
}
