public import CofferCore

/// The one error type of `CofferKeychain`. Its codes carry the meaning of the `errSec…` results that
/// Keychain Services users know, with the same numeric values (``Code/osStatus``), and a reason that
/// says what to do. Reasons never contain a secret.
public struct KeychainError: CofferError {
    /// A stable classification, with the matching Security framework status.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// The `OSStatus` Keychain Services returns for the same condition.
        public let osStatus: Int32
        public init(rawValue: String) { self.init(rawValue, osStatus: -50) }
        init(_ rawValue: String, osStatus: Int32) {
            self.rawValue = rawValue
            self.osStatus = osStatus
        }
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
