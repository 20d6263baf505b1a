public import CofferCore

/// The one error type of `CofferKeychain`. Its codes carry the meaning of the `errSec…` results that
/// Keychain Services users know, with the same numeric values (``Code/osStatus``), and a reason that
/// says what to do. Reasons never contain a secret.
public struct KeychainError: CofferError {
    /// A stable classification, with the matching Security framework status.
    /// Closed: the static members below are every code there is; no caller can make another (so no
    /// made-up code can pass for another with the same `OSStatus`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable string (`item-not-found`), as logs and JSON output carry it.
        public let rawValue: String
        /// The `OSStatus` Keychain Services returns for the same condition.
        public let osStatus: Int32
        private init(_ rawValue: String, osStatus: Int32) {
            self.rawValue = rawValue
            self.osStatus = osStatus
        }
        /// The stable string, ``rawValue``.
        public var description: String { rawValue }

        /// An item with the same identifying attributes already exists (`errSecDuplicateItem`).
        public static let duplicateItem = Code("duplicate-item", osStatus: -25299)
        /// No item matched the query (`errSecItemNotFound`).
        public static let itemNotFound = Code("item-not-found", osStatus: -25300)
        /// The keychain is locked and the item is not readable now (`errSecInteractionNotAllowed`).
        public static let interactionNotAllowed = Code("interaction-not-allowed", osStatus: -25308)
        /// A keychain or application password was wrong, or user presence was not confirmed
        /// (`errSecAuthFailed`).
        public static let authenticationFailed = Code("authentication-failed", osStatus: -25293)
        /// A query or attribute was invalid (`errSecParam`).
        public static let badParameter = Code("bad-parameter", osStatus: -50)
        /// Stored data did not authenticate or decode: the file was edited outside Coffer or damaged
        /// (`errSecDecode`). The item's secret is never returned.
        public static let dataCorrupted = Code("data-corrupted", osStatus: -26275)
        /// An export's author is not the one the import accepts: it opens only with a recipient's private
        /// key and is not signed by a key the importer named, is signed by another key or for other
        /// recipients, or its signature does not verify (`errSecNotTrusted`). Nothing was imported.
        public static let untrustedExport = Code("untrusted-export", osStatus: -67843)
        /// The keychain file does not exist yet (`errSecNoSuchKeychain`).
        public static let noSuchKeychain = Code("no-such-keychain", osStatus: -25294)
        /// The keychain already exists (`errSecDuplicateKeychain`).
        public static let duplicateKeychain = Code("duplicate-keychain", osStatus: -25296)
        /// The database could not be opened, read or written: permissions, a full disk, or another
        /// process holding it too long (`errSecIO`).
        public static let ioFailure = Code("io-failure", osStatus: -36)
        /// The kernel keyring that keeps a keychain unlocked between processes is unavailable or refused
        /// the key (``KeychainSession``; `errSecNotAvailable`).
        public static let keyringUnavailable = Code("keyring-unavailable", osStatus: -25291)
        /// Only the user-wide keyring, shared by every session of the user, could keep the key, and the
        /// caller did not allow it (``KeychainSession``; `errSecNotAvailable`).
        public static let userWideKeyringNotAllowed = Code("user-wide-keyring-not-allowed", osStatus: -25291)
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong and what to do about it.
    public let reason: String
    /// The Coffer source location that raised the error, for bug reports.
    public let location: String
    /// The error of a lower layer that caused this one (a `CofferCoreError`, a database error), when
    /// there is one.
    public let underlying: (any Error)?

    /// Creates an error; library code passes its own location implicitly.
    public init(_ code: Code, _ reason: String, underlying: (any Error)? = nil, fileID: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.location = "\(fileID):\(line)"
    }
}

extension KeychainError {
    // One error per code, for comparing (errors are equal when their codes are): a test writes
    // `#expect(throws: KeychainError.duplicateItem)`, a caller `catch KeychainError.duplicateItem`. Their reason
    // says only the code; code that throws gives a reason with `KeychainError(_:_:)`.

    /// An error of `code` with no reason of its own, for comparing with a thrown one.
    public static func matching(_ code: Code) -> KeychainError { KeychainError(code, comparisonReason(code)) }

    /// An error of code ``Code/duplicateItem`` (`duplicate-item`), for comparing with a thrown one.
    public static var duplicateItem: KeychainError { matching(.duplicateItem) }

    /// An error of code ``Code/itemNotFound`` (`item-not-found`), for comparing with a thrown one.
    public static var itemNotFound: KeychainError { matching(.itemNotFound) }

    /// An error of code ``Code/interactionNotAllowed`` (`interaction-not-allowed`), for comparing with a thrown one.
    public static var interactionNotAllowed: KeychainError { matching(.interactionNotAllowed) }

    /// An error of code ``Code/authenticationFailed`` (`authentication-failed`), for comparing with a thrown one.
    public static var authenticationFailed: KeychainError { matching(.authenticationFailed) }

    /// An error of code ``Code/badParameter`` (`bad-parameter`), for comparing with a thrown one.
    public static var badParameter: KeychainError { matching(.badParameter) }

    /// An error of code ``Code/dataCorrupted`` (`data-corrupted`), for comparing with a thrown one.
    public static var dataCorrupted: KeychainError { matching(.dataCorrupted) }

    /// An error of code ``Code/untrustedExport`` (`untrusted-export`), for comparing with a thrown one.
    public static var untrustedExport: KeychainError { matching(.untrustedExport) }

    /// An error of code ``Code/noSuchKeychain`` (`no-such-keychain`), for comparing with a thrown one.
    public static var noSuchKeychain: KeychainError { matching(.noSuchKeychain) }

    /// An error of code ``Code/duplicateKeychain`` (`duplicate-keychain`), for comparing with a thrown one.
    public static var duplicateKeychain: KeychainError { matching(.duplicateKeychain) }

    /// An error of code ``Code/ioFailure`` (`io-failure`), for comparing with a thrown one.
    public static var ioFailure: KeychainError { matching(.ioFailure) }

    /// An error of code ``Code/keyringUnavailable`` (`keyring-unavailable`), for comparing with a thrown one.
    public static var keyringUnavailable: KeychainError { matching(.keyringUnavailable) }

    /// An error of code ``Code/userWideKeyringNotAllowed`` (`user-wide-keyring-not-allowed`), for comparing with a thrown one.
    public static var userWideKeyringNotAllowed: KeychainError { matching(.userWideKeyringNotAllowed) }
}
