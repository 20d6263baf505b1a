import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

/// Choices shared by `sign` and `verify`.
struct SignatureFlags: ParsableArguments {
    @Option(
        name: .customLong("hash"),
        help: ArgumentHelp("The file hash: sha256, sha384 or sha512 (default: sha512; verifying a bare signature, what OpenSSL pairs with the key: sha256 for P-256, sha384 for P-384, sha512 for P-521, and for RSA PKCS#1 v1.5 the one the signature names; sha512, which 'sign --raw' uses, is tried too).", valueName: "hash"),
        transform: parseSignatureHash
    )
    var chosenHash: DigestAlgorithm?

    /// The hash to sign or verify with: the one named, else SHA-512.
    var hash: DigestAlgorithm { chosenHash ?? .sha512 }
    /// Whether --hash was given.
    var hashWasChosen: Bool { chosenHash != nil }

    /// The hash OpenSSL pairs with a key for a bare signature when none is named: SHA-256 for P-256
    /// and RSA, SHA-384 for P-384, SHA-512 for P-521 (and for keys that sign messages whole).
    static func opensslHash(for algorithm: KeyAlgorithm) -> DigestAlgorithm {
        switch algorithm {
        case .p256, .rsa: .sha256
        case .p384: .sha384
        default: .sha512
        }
    }

    @Flag(help: "Read or write the bare signature bytes, as 'openssl dgst -sign' and 'openssl pkeyutl -rawin' do.")
    var raw = false

    @Flag(help: "RSA: PSS padding (the default in Coffer signature files; --raw defaults to PKCS#1 v1.5).")
    var pss = false

    @Flag(help: "RSA: PKCS#1 v1.5 padding.")
    var pkcs1 = false

    @Flag(help: "With --raw, ECDSA signatures as r||s instead of DER.")
    var ecdsaRaw = false

    func validate() throws {
        if pss && pkcs1 { throw ValidationError("--pss and --pkcs1 are alternatives") }
        if ecdsaRaw && !raw { throw ValidationError("--ecdsa-raw applies to --raw signatures (Coffer signature files always store r||s)") }
    }

    /// The padding: explicit flags win; otherwise PSS in Coffer files and PKCS#1 v1.5 in raw mode.
    var rsaPadding: RSAPadding {
        if pss { return .pss }
        if pkcs1 { return .pkcs1v15 }
        return raw ? .pkcs1v15 : .pss
    }

    var options: SignatureOptions {
        SignatureOptions(hash: hash, rsaPadding: rsaPadding, ecdsaEncoding: ecdsaRaw ? .raw : .der)
    }

    /// Largest message Ed25519 and ML-DSA sign in raw mode, where the whole file must be in memory.
    static let maximumRawMessage = 256 << 20
}

func parseSignatureHash(_ name: String) throws -> DigestAlgorithm {
    guard let hash = DigestAlgorithm(name: name), DigestValue.signableAlgorithms.contains(hash) else {
        throw ValidationError("expected sha256, sha384 or sha512, found '\(name)'")
    }
    return hash
}

/// Reads a whole file for algorithms that sign the message itself, refusing huge inputs.
func readWholeMessage(_ path: String, algorithm: KeyAlgorithm) throws -> [UInt8] {
    guard let bytes = try FileReader.open(path).readAll(limit: SignatureFlags.maximumRawMessage) else {
        throw CommandFailure(
            "\(algorithm) in --raw mode signs the whole input in memory, and '\(path)' is larger than 256 MiB",
            hint: "drop --raw: Coffer signature files hash the file in a stream and sign the digest"
        )
    }
    return bytes
}
