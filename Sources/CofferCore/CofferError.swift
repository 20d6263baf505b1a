/// The shape every Coffer error has, in every module, modelled on swift-asn1's `ASN1Error`:
///
/// - a stable ``code`` to branch on (codes are added, never changed in meaning);
/// - a ``reason`` a person can act on, saying what was expected and what was found, and never holding
///   a secret (no key, password or plaintext; no database URL's password);
/// - the ``location`` in Coffer that raised it, for bug reports;
/// - the ``underlying`` error of a lower layer (a ``CofferCoreError`` under a keychain error, a database
///   driver's error under a store's), kept whole instead of being flattened into the reason.
///
/// Two errors are equal when their codes and reasons are: the location and the underlying error are
/// diagnostics. Public entry points whose failures are all of one module's kind throw that type
/// (typed throws), so a caller's `catch` has the code without casting.
public protocol CofferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of code this error type carries.
    associatedtype Code: RawRepresentable, Hashable, Sendable where Code.RawValue == String
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

    /// Equal when the codes and reasons are: the location and the underlying error are diagnostics.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code && lhs.reason == rhs.reason }

    /// Hashes what equality compares: the code and the reason.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(reason)
    }

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
