/// The shape every Coffer error has, in every module, modelled on swift-asn1's `ASN1Error`:
///
/// - a closed ``code`` to branch on: each error type's `Code` has one static member per kind and no
///   public initializer, so no caller can make up a code (codes are added, never changed in meaning);
///   its `rawValue` is the stable string that logs, problem documents and JSON output carry;
/// - a ``reason`` a person can act on, saying what was expected and what was found, and never holding
///   a secret (no key, password or plaintext; no database URL's password);
/// - the ``location`` in Coffer that raised it (`Module/File.swift:line`, recorded at the throw site),
///   shown by `debugDescription` for bug reports and never in the reason;
/// - the ``underlying`` error of a lower layer (a ``CofferCoreError`` under a keychain error, a database
///   driver's error under a store's), kept whole instead of being flattened into the reason.
///
/// Two errors are equal when their codes are, as swift-asn1's are "to make testing easy": the reason,
/// the location and the underlying error are for people. Each error type has a static member per code
/// that makes an error of that code, so a test writes `#expect(throws: KeychainError.itemNotFound)`
/// and a caller `catch KeychainError.itemNotFound`. Public entry points whose failures are all of one
/// module's kind throw that type (typed throws), so a caller's `catch` has the code without casting.
public protocol CofferError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The kind of code this error type carries: a closed set of static members, each with a stable
    /// string as its description.
    associatedtype Code: Hashable, Sendable, CustomStringConvertible
    /// What kind of failure this is.
    var code: Code { get }
    /// What went wrong, for a person: what was expected and what was found.
    var reason: String { get }
    /// The Coffer source location (`Module/File.swift:line`) that raised the error.
    var location: String { get }
    /// The lower layer's error that caused this one, when there is one.
    var underlying: (any Error)? { get }
}

extension CofferError {
    /// The reason: what a person reads.
    public var description: String { reason }

    /// For developers: the type, the code, the description, where Coffer raised it and the lower
    /// layer's error (`KeychainError(item-not-found): no item matches … at CofferKeychain/Keychain.swift:120`).
    /// Programs that show errors to users print `description` (or `reason`), never this.
    public var debugDescription: String {
        let under = underlying.map { "; underlying: \(String(reflecting: $0))" } ?? ""
        return "\(Self.self)(\(code)): \(description) at \(location)\(under)"
    }

    /// Equal when the codes are: the reason, the location and the underlying error are for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// Hashes what equality compares: the code.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// The text a factory such as `KeychainError.itemNotFound` gives its error: errors made to be
    /// compared with (`#expect(throws:)`, `catch`) say only their code.
    package static func comparisonReason(_ code: Code) -> String { "an error of code \(code)" }

    /// Runs `body` for an entry point whose failures are all of this type: an error of this type passes
    /// through, any other (a lower layer's, swift-crypto's) becomes `wrap(error)`, which keeps it as the
    /// underlying error.
    package static func wrapping<Result>(_ body: () throws -> Result, otherwise wrap: (any Error) -> Self) throws(Self) -> Result {
        do {
            return try body()
        } catch let error as Self {
            throw error
        } catch {
            throw wrap(error)
        }
    }
}
