public import CofferCore

/// The error `CofferPKCS11` throws: a stable ``Code``, the PKCS #11 function that failed with its
/// return value's name (`C_Login: CKR_PIN_INCORRECT`), and the token it concerns. Never holds a PIN.
public struct PKCS11Error: CofferError {
    /// A stable, machine-readable classification.
    /// Closed: the static members below are every code there is; no caller can make another.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`module-not-loaded`), as logs, problem documents and JSON output carry it.
        public let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// The module file cannot be loaded, or has no `C_GetFunctionList`.
        public static let moduleNotLoaded = Code(rawValue: "module-not-loaded")
        /// No slot holds a token with the label (or serial) asked for.
        public static let tokenNotFound = Code(rawValue: "token-not-found")
        /// A URI matches more than one token, or more than one key: nothing is used, and no PIN is sent.
        public static let ambiguousMatch = Code(rawValue: "ambiguous-match")
        /// The PIN is wrong, locked, or expired.
        public static let pinIncorrect = Code(rawValue: "pin-incorrect")
        /// The PIN file a URI's `pin-source` names cannot be read, or its first line is empty.
        public static let pinSourceUnreadable = Code(rawValue: "pin-source-unreadable")
        /// No key on the token matches (label, id, or the URI's attributes).
        public static let keyNotFound = Code(rawValue: "key-not-found")
        /// The key exists but may not do this (no `CKA_SIGN`, a mechanism the token lacks).
        public static let notPermitted = Code(rawValue: "not-permitted")
        /// A `pkcs11:` URI (RFC 7512) is malformed or asks for something Coffer does not take.
        public static let malformedURI = Code(rawValue: "malformed-uri")
        /// The key type or curve is not one Coffer uses (P-256, P-384, Ed25519, RSA).
        public static let unsupported = Code(rawValue: "unsupported")
        /// Any other failing return value of the module.
        public static let moduleFailure = Code(rawValue: "module-failure")
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong: the function, its return value's name, the token. Never a PIN.
    public let reason: String
    /// The Coffer source location that raised the error.
    public let location: String
    /// The lower layer's error that caused this one (swift-crypto reading a public key), when there is one.
    public let underlying: (any Error)?
    /// The PKCS #11 function that failed, when one did (`C_Sign`).
    public let function: String?
    /// Its return value (a `CKR_…` constant), when one failed.
    public let returnValue: UInt?

    /// Creates an error. Library code passes its own location implicitly.
    public init(
        _ code: Code, _ reason: String, function: String? = nil, returnValue: UInt? = nil, underlying: (any Error)? = nil,
        fileID: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.function = function
        self.returnValue = returnValue
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }

    /// The error for a failing return value of `function`, on `token` when known.
    static func failed(_ function: String, _ value: UInt, token: String? = nil, fileID: StaticString = #fileID, line: UInt = #line) -> PKCS11Error {
        let name = ReturnValue.name(value)
        let on = token.map { " on token '\($0)'" } ?? ""
        let code: Code = switch name {
        case "CKR_PIN_INCORRECT", "CKR_PIN_LOCKED", "CKR_PIN_EXPIRED", "CKR_PIN_INVALID", "CKR_PIN_LEN_RANGE": .pinIncorrect
        case "CKR_KEY_FUNCTION_NOT_PERMITTED", "CKR_MECHANISM_INVALID", "CKR_KEY_TYPE_INCONSISTENT", "CKR_ATTRIBUTE_SENSITIVE": .notPermitted
        case "CKR_TOKEN_NOT_PRESENT", "CKR_SLOT_ID_INVALID", "CKR_TOKEN_NOT_RECOGNIZED": .tokenNotFound
        case "CKR_OBJECT_HANDLE_INVALID", "CKR_KEY_HANDLE_INVALID": .keyNotFound
        default: .moduleFailure
        }
        return PKCS11Error(code, "\(function) failed\(on): \(name)", function: function, returnValue: value, fileID: fileID, line: line)
    }
}

extension PKCS11Error {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: PKCS11Error.moduleNotLoaded)`, a caller `catch PKCS11Error.moduleNotLoaded`. Their reason
    // says only the code; code that throws gives a reason with `PKCS11Error(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> PKCS11Error { PKCS11Error(code, comparisonReason(code)) }

    /// An error of code ``Code/moduleNotLoaded`` (`module-not-loaded`), for comparing with a thrown one.
    public static var moduleNotLoaded: PKCS11Error { matching(.moduleNotLoaded) }

    /// An error of code ``Code/tokenNotFound`` (`token-not-found`), for comparing with a thrown one.
    public static var tokenNotFound: PKCS11Error { matching(.tokenNotFound) }

    /// An error of code ``Code/ambiguousMatch`` (`ambiguous-match`), for comparing with a thrown one.
    public static var ambiguousMatch: PKCS11Error { matching(.ambiguousMatch) }

    /// An error of code ``Code/pinIncorrect`` (`pin-incorrect`), for comparing with a thrown one.
    public static var pinIncorrect: PKCS11Error { matching(.pinIncorrect) }

    /// An error of code ``Code/pinSourceUnreadable`` (`pin-source-unreadable`), for comparing with a thrown one.
    public static var pinSourceUnreadable: PKCS11Error { matching(.pinSourceUnreadable) }

    /// An error of code ``Code/keyNotFound`` (`key-not-found`), for comparing with a thrown one.
    public static var keyNotFound: PKCS11Error { matching(.keyNotFound) }

    /// An error of code ``Code/notPermitted`` (`not-permitted`), for comparing with a thrown one.
    public static var notPermitted: PKCS11Error { matching(.notPermitted) }

    /// An error of code ``Code/malformedURI`` (`malformed-uri`), for comparing with a thrown one.
    public static var malformedURI: PKCS11Error { matching(.malformedURI) }

    /// An error of code ``Code/unsupported`` (`unsupported`), for comparing with a thrown one.
    public static var unsupported: PKCS11Error { matching(.unsupported) }

    /// An error of code ``Code/moduleFailure`` (`module-failure`), for comparing with a thrown one.
    public static var moduleFailure: PKCS11Error { matching(.moduleFailure) }
}
