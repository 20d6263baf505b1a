import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferKeychain
import CofferPins
import Crypto
import _CryptoExtras
import Dispatch
import Foundation
import HTTPTypes

/// One parser of untrusted input and how to feed it. A target may only fail by crashing on purpose
/// (`fail`), when a differential check finds two implementations disagreeing or a round trip breaking.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    let run: @Sendable ([UInt8]) -> Void

    static let all: [FuzzTarget] = [
        FuzzTarget(name: "key-import", summary: "ImportedKey(importing:): PEM, DER, (encrypted) PKCS#8, PKCS#1, SEC1, JWK, Apple, OpenSSH", run: keyImport),
        FuzzTarget(name: "key-differential", summary: "our key parsers against swift-crypto's own for SPKI, PKCS#8 and raw keys", run: keyDifferential),
        FuzzTarget(name: "signature-differential", summary: "VerifyingKey.isValidSignature against a direct swift-crypto verify", run: signatureDifferential),
        FuzzTarget(name: "signature-file", summary: "SignatureFile text and binary forms", run: signatureFile),
        FuzzTarget(name: "coffer-decrypt", summary: "the Coffer encrypted format: header and segment stream (key and password modes)", run: cofferDecrypt),
        FuzzTarget(name: "armour", summary: "armoured Coffer files: the streaming armour reader, a round trip, then decryption", run: armour),
        FuzzTarget(name: "rncryptor", summary: "RNCryptor v3 in key mode", run: rncryptor),
        FuzzTarget(name: "openssl-enc", summary: "OpenSSL enc Salted__ files", run: openSSLEnc),
        FuzzTarget(name: "http-signature-fields", summary: "RFC 9421 Signature-Input and Signature fields, then verification", run: httpSignatureFields),
        FuzzTarget(name: "raw-http-request", summary: "the raw HTTP/1.1 request reader, then signature and Content-Digest verification", run: rawHTTPRequest),
        FuzzTarget(name: "keychain-export", summary: "keychain export documents, imported into a real keychain", run: keychainExport),
        FuzzTarget(name: "checksum-list", summary: "--check lists (GNU and BSD lines), strict and lenient", run: checksumList),
        FuzzTarget(name: "password-hash", summary: "stored credentials: PHC strings and legacy hash records", run: passwordHash),
        FuzzTarget(name: "certificate", summary: "server certificates and pins as CofferPins reads them", run: certificate),
    ]
}

/// Stops the fuzzer with a message: a finding.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FINDING: \(message)\n".utf8))
    abort()
}

// MARK: - Fixed keys (the same in every run, so seeds written once stay valid)

enum Fixed {
    static let encryptionKey = try? EncryptionKey(bytes: [UInt8](repeating: 0x42, count: 32))
    static let rncryptorKeys = try? RNCryptor.Keys(encryptionKey: [UInt8](repeating: 1, count: 32), hmacKey: [UInt8](repeating: 2, count: 32))
    static let password = Array("correct horse battery staple".utf8)
    static let macSecret = try? MACKey(bytes: [UInt8](repeating: 3, count: 32))
    static let ed25519 = try? Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 4, count: 32))
    static let p256 = try? P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 5, count: 32))
    /// Limits low enough that a hostile header cannot make one input take long. scrypt is capped at
    /// log2 N = 4 and 64 KiB: at the writer's smallest cost (log2 N = 10) it took 70% of the Coffer
    /// target's time for no coverage (past the KDF only the right password unwraps anything), so the seeds'
    /// password stanzas now exercise the cost refusal and mutated low costs the unwrap.
    static let decryptionLimits = PasswordKDFLimits(maximumScryptLogN: 4, maximumScryptMemory: 1 << 16, maximumPBKDF2Iterations: 64)
    static let keyLimits = PasswordKDFLimits(maximumScryptLogN: 11, maximumScryptMemory: 1 << 21, maximumPBKDF2Iterations: 2_000)

    static let p256VerifyingKey = p256.flatMap { try? VerifyingKey(.p256($0.publicKey)) }
    static let ed25519VerifyingKey = ed25519.flatMap { try? VerifyingKey(.ed25519($0.publicKey)) }

    /// The keys the HTTP targets verify with, by key id.
    static let httpKeys: HTTPStaticKeys = {
        var keys: [String: HTTPVerificationKey] = [:]
        if let macSecret { keys["hmac"] = .hmacSHA256(secret: macSecret) }
        if let key = ed25519VerifyingKey, let bound = try? HTTPVerificationKey(key) { keys["ed25519"] = bound }
        if let key = p256VerifyingKey, let bound = try? HTTPVerificationKey(key) { keys["p256"] = bound }
        return HTTPStaticKeys(keys)
    }()
    /// Verifiers without a replay cache (each input is a first sighting): one requiring nothing, one
    /// with the default policy.
    static let anyComponents = HTTPMessageVerifier(policy: HTTPSignaturePolicy(requiring: []), keys: httpKeys, replayCache: nil)
    static let defaultPolicy = HTTPMessageVerifier(policy: HTTPSignaturePolicy(), keys: httpKeys, replayCache: nil)

    /// Creates every fixed value (see `fuzzInitialize`).
    static func prepare() {
        _ = (encryptionKey, rncryptorKeys, macSecret, p256VerifyingKey, ed25519VerifyingKey, anyComponents, defaultPolicy, fuzzKeychain)
    }
}

/// Runs async work to completion from the fuzzer's synchronous callback.
func blocking(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

// MARK: - Targets

@Sendable func keyImport(_ bytes: [UInt8]) {
    guard let imported = try? ImportedKey(importing: bytes, password: { Fixed.password }, limits: Fixed.keyLimits) else { return }
    // Whatever was accepted must export and read back as the same public key.
    guard let spki = try? imported.verifyingKey.representation(as: .spki, encoding: .der) else {
        fail("an imported \(imported.format) key cannot be exported as SPKI")
    }
    guard let again = try? ImportedKey(importing: spki), (try? again.verifyingKey.representation(as: .spki, encoding: .der)) == spki else {
        fail("an imported \(imported.format) key does not survive SPKI export and import")
    }
}

@Sendable func keyDifferential(_ bytes: [UInt8]) {
    // Where swift-crypto reads a key from its own canonical encoding (what it reads re-serializes to the
    // very same bytes), Coffer must read the same key. On other inputs Coffer may be stricter: it
    // refuses a SEC1 key whose embedded public key is not its private key's, as OpenSSL's check does,
    // where swift-crypto ignores the embedded key.
    func agree(_ theirs: (canonical: [UInt8], spki: [UInt8])?, _ what: String) {
        guard let theirs, theirs.canonical == bytes else { return }
        guard let ours = try? ImportedKey(importing: bytes, password: { Fixed.password }, limits: Fixed.keyLimits) else {
            fail("swift-crypto reads \(what) that Coffer rejects")
        }
        guard let spki = try? ours.verifyingKey.representation(as: .spki, encoding: .der), spki == theirs.spki else {
            fail("Coffer reads \(what) as a different key than swift-crypto")
        }
    }
    agree((try? P256.Signing.PublicKey(derRepresentation: bytes)).map { (Array($0.derRepresentation), Array($0.derRepresentation)) }, "a P-256 SPKI")
    agree((try? P384.Signing.PublicKey(derRepresentation: bytes)).map { (Array($0.derRepresentation), Array($0.derRepresentation)) }, "a P-384 SPKI")
    agree((try? P521.Signing.PublicKey(derRepresentation: bytes)).map { (Array($0.derRepresentation), Array($0.derRepresentation)) }, "a P-521 SPKI")
    agree((try? Curve25519.Signing.PublicKey(derRepresentation: bytes)).map { (Array($0.derRepresentation), Array($0.derRepresentation)) }, "an Ed25519 SPKI")
    agree((try? P256.Signing.PrivateKey(derRepresentation: bytes)).map { (Array($0.derRepresentation), Array($0.publicKey.derRepresentation)) }, "a P-256 private key")
    agree((try? P384.Signing.PrivateKey(derRepresentation: bytes)).map { (Array($0.derRepresentation), Array($0.publicKey.derRepresentation)) }, "a P-384 private key")
    if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN PUBLIC KEY-----"), let key = try? P256.Signing.PublicKey(pemRepresentation: text),
       let ours = try? ImportedKey(importing: bytes), (try? ours.verifyingKey.representation(as: .spki, encoding: .der)) != Array(key.derRepresentation) {
        fail("Coffer reads a P-256 PEM public key as a different key than swift-crypto")
    }
}

@Sendable func signatureDifferential(_ bytes: [UInt8]) {
    // The first byte picks the message length; the rest is the signature. Both verifiers must agree.
    guard let p256 = Fixed.p256, let ed25519 = Fixed.ed25519, let first = bytes.first else { return }
    let split = min(Int(first) % 64, bytes.count - 1)
    let message = Array(bytes[1..<(1 + split)])
    let signature = Array(bytes[(1 + split)...])
    if let ours = Fixed.p256VerifyingKey {
        let theirs = (try? P256.Signing.ECDSASignature(derRepresentation: signature)).map { p256.publicKey.isValidSignature($0, for: SHA256.hash(data: message)) } ?? false
        if ours.isValidSignature(signature, for: message, options: SignatureOptions(hash: .sha256)) != theirs {
            fail("P-256 verification disagrees with swift-crypto")
        }
    }
    if let ours = Fixed.ed25519VerifyingKey {
        if ours.isValidSignature(signature, for: message) != ed25519.publicKey.isValidSignature(signature, for: message) {
            fail("Ed25519 verification disagrees with swift-crypto")
        }
    }
}

@Sendable func signatureFile(_ bytes: [UInt8]) {
    if let parsed = try? SignatureFile(binary: bytes), (try? SignatureFile(binary: parsed.binary)) != parsed {
        fail("a binary signature file does not survive re-encoding")
    }
    if let text = String(validating: bytes, as: UTF8.self) {
        _ = try? SignatureFile(parsing: text)
    }
}

@Sendable func cofferDecrypt(_ bytes: [UInt8]) {
    guard let key = Fixed.encryptionKey else { return }
    _ = try? CofferEncryption.decrypt(bytes, with: .key(key), limits: Fixed.decryptionLimits)
    _ = try? CofferEncryption.decrypt(bytes, with: .password(Fixed.password), limits: Fixed.decryptionLimits)
}

@Sendable func armour(_ bytes: [UInt8]) {
    guard let file = try? CofferArmor.dearmor(bytes) else { return }
    guard (try? CofferArmor.dearmor(Array(CofferArmor.armor(file).utf8))) == file else { fail("armour: armor(dearmor(x)) does not read back") }
    guard let key = Fixed.encryptionKey else { return }
    _ = try? CofferEncryption.decrypt(file, with: .key(key), limits: Fixed.decryptionLimits)
}

@Sendable func rncryptor(_ bytes: [UInt8]) {
    guard let keys = Fixed.rncryptorKeys else { return }
    _ = try? RNCryptor.decrypt(bytes, with: .keys(keys))
}

@Sendable func openSSLEnc(_ bytes: [UInt8]) {
    _ = try? OpenSSLEnc.decrypt(bytes, password: Fixed.password, iterations: 1)
}

@Sendable func httpSignatureFields(_ bytes: [UInt8]) {
    // Signature-Input, a line feed, then Signature.
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else { return }
    // The request the seeds signed (Seeds.signedRequests), so that seeds reach the signature check.
    var request = HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/foo?param=Value&Pet=dog")
    request.headerFields[.contentType] = "application/json"
    request.headerFields[.contentDigest] = ContentDigest.fieldValue(for: Seeds.body)
    guard let input = HTTPField.Name("Signature-Input"), let signature = HTTPField.Name("Signature") else { return }
    request.headerFields[input] = String(parts[0])
    request.headerFields[signature] = String(parts[1])
    _ = try? HTTPSignatureFields.signatures(in: request.headerFields)
    let message = request
    blocking { _ = try? await Fixed.anyComponents.verify(message, body: Seeds.body, now: Seeds.signingTime) }
}

@Sendable func rawHTTPRequest(_ bytes: [UInt8]) {
    var limits = RawHTTPRequest.Limits()
    limits.maximumBodyBytes = 64 * 1024
    guard let (request, body) = try? RawHTTPRequest.parse(bytes, limits: limits) else { return }
    blocking { _ = try? await Fixed.defaultPolicy.verify(request, body: body, now: Seeds.signingTime) }
}

/// A keychain in memory, made once: each input is imported into it, then removed.
let fuzzKeychain: Keychain? = {
    let keychain = Keychain.inMemory()
    guard (try? keychain.create(password: "fuzz", kdf: .scrypt(logN: 10, r: 8, p: 1))) != nil else { return nil }
    return keychain
}()

@Sendable func keychainExport(_ bytes: [UInt8]) {
    // The input is the export's inner document; sealing it with the fixed key gets it past the AEAD,
    // so the fuzzer reaches the document reader and the import itself.
    guard let keychain = fuzzKeychain, let key = Fixed.encryptionKey,
          let sealed = try? CofferEncryption.encrypt(bytes, to: .key(key)) else { return }
    guard let summary = try? keychain.importItems(sealed, credential: .key(key), ifExists: .skipExisting) else { return }
    if summary.imported > 0 {
        for itemClass in ItemClass.allCases {
            _ = try? keychain.delete(matching: KeychainQuery(itemClass: itemClass))
        }
    }
}

@Sendable func checksumList(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    for strict in [false, true] {
        _ = ChecksumList.parse(text, algorithm: .sha256, strict: strict)
    }
}

@Sendable func passwordHash(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    if let parsed = try? PasswordHash(phcString: text), (try? PasswordHash(phcString: parsed.phcString))?.phcString != parsed.phcString {
        fail("a PHC string does not survive re-encoding")
    }
    _ = try? StoredPassword(storedString: text, email: "ada@example.com")
}

@Sendable func certificate(_ bytes: [UInt8]) {
    if let parsed = try? ChainCertificate(der: bytes), parsed.publicKeyPin.sha256.count != 32 {
        fail("a certificate's pin is not 32 bytes")
    }
    if let text = String(validating: bytes, as: UTF8.self), let pin = try? Pin(text), (try? Pin(pin.description)) != pin {
        fail("a pin does not survive its own text form")
    }
}
