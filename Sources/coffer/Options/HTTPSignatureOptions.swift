import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import Foundation
import HTTPTypes

/// The signing flags shared by `coffer http sign` and `coffer request`.
struct HTTPSigningOptions: ParsableArguments {
    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("The private key (PEM, DER or JWK; a pkcs11: URI for a key on a token), or with --alg hmac-sha256 the shared secret.", valueName: "file"))
    var key: String?

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("The token's PKCS #11 module, for a pkcs11: key (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    @Option(name: .customLong("keyid"), help: ArgumentHelp("The keyid the server knows the key by (from POST /register).", valueName: "id"))
    var keyID: String?

    @Option(name: .customLong("alg"), help: ArgumentHelp("The algorithm, where the key does not imply it: hmac-sha256, rsa-pss-sha512 or rsa-v1_5-sha256.", valueName: "name"))
    var algorithm: String?

    @Option(name: .customLong("secret-encoding"), help: "How an HMAC secret file is written: base64 (as /register returns it), hex or raw.")
    var secretEncoding: SecretEncoding = .base64

    @Option(name: .customLong("cover"), help: ArgumentHelp("A component to cover (repeat): @method, @target-uri, content-digest, @query-param;name=\"id\"… Default: @method @target-uri, and content-digest (and content-type) with a body.", valueName: "component"))
    var cover: [String] = []

    @Option(help: ArgumentHelp("The signature's label.", valueName: "label"))
    var label: String = "sig1"

    @Option(help: ArgumentHelp("The tag parameter (which application the signature is for).", valueName: "text"))
    var tag: String?

    @Option(name: .customLong("expires-in"), help: ArgumentHelp("Add expires = created + this many seconds.", valueName: "seconds"))
    var expiresIn: Int64?

    @Flag(name: .customLong("no-nonce"), help: "Leave out the random nonce.")
    var noNonce = false

    @Option(name: .customLong("digest"), help: "The Content-Digest algorithm: sha-256 or sha-512.")
    var digest: String = "sha-256"

    @OptionGroup(title: "Password (for an encrypted key)")
    var passwords: PasswordOptions

    var isSigning: Bool { key != nil }

    func validate() throws {
        if key != nil && keyID == nil { throw ValidationError("--keyid is required with --key: the server finds the key by it") }
        if key == nil && keyID != nil { throw ValidationError("--keyid needs --key") }
    }

    /// The signer the flags describe.
    func signer() throws -> HTTPMessageSigner {
        guard let key, let keyID else { throw CommandFailure("a key is required: pass -k FILE --keyid ID") }
        let algorithm = try algorithm.map(parseHTTPSignatureAlgorithm)
        let signingKey: HTTPSigningKey
        if algorithm == .hmacSHA256 {
            signingKey = .hmacSHA256(secret: try KeyOptions.loadFile(key, encoding: secretEncoding))
        } else {
            let privateKey: SigningKey
            if HardwareKeys.isURI(key) {
                privateKey = try SigningKey(HardwareKeys.privateKey(key, module: pkcs11Module, passwords: passwords))
            } else {
                let imported = try KeyFiles.importKey(key, passwords: passwords)
                guard let signingKey = imported.signingKey else {
                    throw CommandFailure("\(key) holds a public key; signing needs the private key", hint: "for a shared secret, pass --alg hmac-sha256")
                }
                privateKey = signingKey
            }
            do {
                signingKey = try HTTPSigningKey(privateKey, algorithm: algorithm)
            } catch {
                throw CommandFailure(error.reason, hint: "pass --alg rsa-pss-sha512 or --alg rsa-v1_5-sha256 for an RSA key")
            }
        }
        var signer = HTTPMessageSigner(key: signingKey, keyID: keyID)
        signer.label = label
        signer.tag = tag
        signer.lifetime = expiresIn
        signer.includesNonce = !noNonce
        guard let digestAlgorithm = ContentDigestAlgorithm(rawValue: digest) else { throw CommandFailure("--digest takes sha-256 or sha-512") }
        signer.digestAlgorithms = [digestAlgorithm]
        if !cover.isEmpty { signer.components = try cover.map(parseComponent) }
        return signer
    }
}

func parseHTTPSignatureAlgorithm(_ name: String) throws -> HTTPSignatureAlgorithm {
    guard let algorithm = HTTPSignatureAlgorithm(rawValue: name) else {
        throw CommandFailure("unknown algorithm '\(name)'", hint: "use one of: " + HTTPSignatureAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))
    }
    return algorithm
}

func parseComponent(_ text: String) throws -> HTTPSignatureComponent {
    do {
        return try HTTPSignatureComponent(parsing: text)
    } catch {
        throw CommandFailure(reporting: error)
    }
}

/// Reads `Name: value` header flags.
func parseHeaderFlags(_ flags: [String]) throws -> HTTPFields {
    var fields = HTTPFields()
    for flag in flags {
        guard let colon = flag.firstIndex(of: ":"), let name = HTTPField.Name(String(flag[..<colon])) else {
            throw CommandFailure("-H '\(flag)' is not 'Name: value'")
        }
        let value = String(flag[flag.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        guard HTTPField.isValidValue(value) else { throw CommandFailure("-H '\(flag)': the value has characters a header cannot carry") }
        fields.append(HTTPField(name: name, value: value))
    }
    return fields
}

/// An `HTTPRequest` for a method and an absolute URL.
func makeRequest(method: String, url: String, headers: [String]) throws -> HTTPRequest {
    guard let method = HTTPRequest.Method(method.uppercased()) else { throw CommandFailure("'\(method)' is not an HTTP method") }
    let target = try ServerURL(url, defaultScheme: nil)
    return HTTPRequest(
        method: method, scheme: target.scheme, authority: target.authority, path: target.pathAndQuery,
        headerFields: try parseHeaderFlags(headers)
    )
}
