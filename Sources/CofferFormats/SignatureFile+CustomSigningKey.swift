public import CofferCrypto

extension SignatureFile {
    /// `sign(fileAtPath:with:comment:hash:rsaPadding:progress:)` with a hardware key given bare, as
    /// before a `SigningKey` could hold one.
    @available(*, deprecated, message: "wrap the key: SigningKey(key)")
    public static func sign(
        fileAtPath path: String, with key: some CustomSigningKey, comment: String, hash: DigestAlgorithm = .sha512,
        rsaPadding: RSAPadding = .pss, progress: ((Int64) -> Void)? = nil
    ) throws -> SignatureFile {
        try sign(fileAtPath: path, with: SigningKey(key), comment: comment, hash: hash, rsaPadding: rsaPadding, progress: progress)
    }

    /// `sign(digest:with:comment:rsaPadding:)` with a hardware key given bare, as before a
    /// `SigningKey` could hold one.
    /// - Throws: ``CofferFormatsError`` `.invalidArgument` for a key `SigningKey(_:)` refuses.
    @available(*, deprecated, message: "wrap the key: SigningKey(key)")
    public static func sign(digest: DigestValue, with key: some CustomSigningKey, comment: String, rsaPadding: RSAPadding = .pss) throws(CofferFormatsError) -> SignatureFile {
        let wrapped: SigningKey
        do {
            wrapped = try SigningKey(key)
        } catch {
            throw CofferFormatsError(.invalidArgument, error.reason, underlying: error)
        }
        return try sign(digest: digest, with: wrapped, comment: comment, rsaPadding: rsaPadding)
    }
}
