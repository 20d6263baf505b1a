/// What a server demands of a signature, stated once (RFC 9421 §3.2.1 leaves these choices to the
/// verifier). The defaults are strict: `@method` and `@target-uri` covered, `content-digest` covered
/// whenever there is a body, `created` required and at most five minutes old, 30 seconds of clock skew.
public struct HTTPSignaturePolicy: Sendable, Hashable {
    /// Components every accepted signature must cover.
    public var requiredComponents: [HTTPSignatureComponent] = [.method, .targetURI]
    /// Whether a request with content must have `content-digest` covered (and its digest checked).
    public var requiresContentDigestWithBody = true
    /// Whether `created` must be present.
    public var requiresCreated = true
    /// Whether `expires` must be present.
    public var requiresExpires = false
    /// Whether `nonce` must be present. Without one, the replay cache remembers the signature itself.
    public var requiresNonce = false
    /// The oldest `created` accepted, in seconds; nil for no limit (then `expires` alone bounds a
    /// signature's life).
    public var maximumAge: Int64? = 300
    /// How far `created` may lie in the future and `expires` in the past, in seconds, for clocks that
    /// disagree.
    public var clockSkew: Int64 = 30
    /// The `tag` a signature must carry; nil to accept any or none.
    public var tag: String?
    /// Only the signature with this label is considered; nil to consider each in turn.
    public var label: String?

    /// The strict defaults above.
    public init() {}

    /// The defaults, covering these components as well.
    public init(requiring components: [HTTPSignatureComponent]) {
        requiredComponents = components
    }
}
