import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferKeychain
import Crypto
import Foundation
import HTTPTypes
import SwiftASN1
import X509
import CofferPins

/// Seed inputs for every target, made with Coffer's own writers and the fixed keys, so that the fuzzer
/// starts from inputs that reach deep into each parser (a valid header, a signature that verifies).
/// The script adds the external vectors (RFC 9421 keys, RNCryptor files) beside them.
enum Seeds {
    /// The `created` time of the signed seeds, and the verifier's clock in `raw-http-request`.
    static let signingTime: Int64 = 1_700_000_000
    /// The body of the signed request seeds.
    static let body = Array("{\"hello\": \"world\"}".utf8)

    /// Every target's seeds, by target name.
    static func all() throws -> [String: [[UInt8]]] {
        var seeds: [String: [[UInt8]]] = [:]
        let keys = try keys()
        seeds["key-import"] = keys
        seeds["key-differential"] = keys
        seeds["signature-differential"] = try signatures()
        seeds["signature-file"] = try signatureFiles()
        seeds["coffer-decrypt"] = try cofferFiles()
        seeds["armour"] = try cofferFiles().map { Array(CofferArmor.armor($0).utf8) }
        seeds["rncryptor"] = try rncryptorMessages()
        seeds["openssl-enc"] = try [[], Array("secret".utf8), [UInt8](repeating: 9, count: 100)].map {
            try OpenSSLEnc.encrypt($0, password: Fixed.password, iterations: 1)
        }
        let requests = try signedRequests()
        seeds["http-signature-fields"] = requests.map { Array(($0.signatureInput + "\n" + $0.signature).utf8) }
        seeds["raw-http-request"] = requests.map(\.raw)
        seeds["keychain-export"] = try exportDocuments()
        seeds["checksum-list"] = [
            Array("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt\n".utf8),
            Array("SHA256 (a file) = e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n".utf8),
            Array("\\e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 *dir\\\\name\\nwith newline\n".utf8),
        ]
        seeds["certificate"] = try certificates()
        let salt = String(repeating: "A", count: 22), hash = String(repeating: "B", count: 43)
        seeds["password-hash"] = [
            "$scrypt$ln=17,r=8,p=1$\(salt)$\(hash)", "$pbkdf2-sha256$i=600000$\(salt)$\(hash)",
            "$pbkdf2-sha256$29000$N2bMOSdESGnNGcMYA2BgjA$wCPH.gGb1NmeE2o3LJB4Oq.KbtGxNAnBg5GS1uHfbMw",
            "$sha256-legacy$salt=\(salt)$\(String(repeating: "0", count: 64))",
        ].map { Array($0.utf8) }
        return seeds
    }

    static func write(into directory: String) throws {
        let seeds = try all()
        for target in FuzzTarget.all {
            let folder = directory + "/" + target.name
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (index, seed) in (seeds[target.name] ?? []).enumerated() {
                try Data(seed).write(to: URL(fileURLWithPath: folder + "/coffer-seed-\(index)"))
            }
        }
    }

    private static func keys() throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        for type in [KeyAlgorithm.p256, .p384, .p521, .ed25519, .rsa2048] {
            let key = try SigningKey.generate(type)
            for format in KeyFormat.allCases {
                for encoding in [KeyEncoding.pem, .der] {
                    if let bytes = try? key.representation(as: format, encoding: encoding) { out.append(bytes) }
                    if let bytes = try? key.verifyingKey.representation(as: format, encoding: encoding) { out.append(bytes) }
                }
            }
            for kdf in [PasswordKDF.pbkdf2(iterations: PasswordKDF.minimumPBKDF2Iterations), .scrypt(logN: 10, r: 8, p: 1)] {
                if let bytes = try? key.encryptedPKCS8Representation(password: Fixed.password, kdf: kdf) { out.append(bytes) }
            }
        }
        return out
    }

    private static func signatures() throws -> [[UInt8]] {
        guard let p256 = Fixed.p256, let ed25519 = Fixed.ed25519 else { return [] }
        let message = Array("a message of thirty-two bytes!!!".utf8)
        let p256Signature = try p256.signature(for: SHA256.hash(data: message)).derRepresentation
        let edSignature = try ed25519.signature(for: message)
        return [[UInt8(message.count)] + message + Array(p256Signature), [UInt8(message.count)] + message + Array(edSignature)]
    }

    private static func signatureFiles() throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        let digest = DigestAlgorithm.sha512.hash(Array("release.tar.gz".utf8))
        for type in [KeyAlgorithm.ed25519, .p256, .rsa2048] {
            let file = try SignatureFile.sign(digest: digest, with: try SigningKey.generate(type), comment: "release 1.0")
            out.append(file.binary)
            out.append(Array(file.armored.utf8))
        }
        return out
    }

    private static func cofferFiles() throws -> [[UInt8]] {
        guard let key = Fixed.encryptionKey else { return [] }
        var out: [[UInt8]] = []
        for size in [0, 1, 1_000, 70_000] {
            let plaintext = [UInt8](repeating: 0x61, count: size)
            out.append(try CofferEncryption.encrypt(plaintext, to: .key(key)))
            out.append(try CofferEncryption.encrypt(plaintext, to: .key(key), cipher: .chaCha20Poly1305))
        }
        out.append(try CofferEncryption.encrypt(Array("hello".utf8), to: .password(Fixed.password, .scrypt(logN: 10, r: 8, p: 1))))
        if let pbkdf2 = try? CofferEncryption.encrypt(Array("hello".utf8), to: .password(Fixed.password, .pbkdf2(iterations: 1_000))) {
            out.append(pbkdf2)
        }
        return out
    }

    private static func rncryptorMessages() throws -> [[UInt8]] {
        guard let keys = Fixed.rncryptorKeys else { return [] }
        return try [[], Array("secret".utf8), [UInt8](repeating: 7, count: 100)].map { try RNCryptor.encrypt($0, with: .keys(keys)) }
    }

    private static func signedRequests() throws -> [(signatureInput: String, signature: String, raw: [UInt8])] {
        var keys: [(HTTPSigningKey, String)] = []
        if let secret = Fixed.macSecret { keys.append((.hmacSHA256(secret: secret), "hmac")) }
        if let ed25519 = Fixed.ed25519 { keys.append((try HTTPSigningKey(SigningKey(ed25519)), "ed25519")) }
        if let p256 = Fixed.p256 { keys.append((try HTTPSigningKey(SigningKey(p256)), "p256")) }
        return try keys.map { key, keyID in
            var request = HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/foo?param=Value&Pet=dog")
            request.headerFields[.contentType] = "application/json"
            var signer = HTTPMessageSigner(key: key, keyID: keyID)
            signer.lifetime = 300
            _ = try signer.sign(&request, body: body, now: signingTime)
            var raw = "POST /foo?param=Value&Pet=dog HTTP/1.1\r\nHost: example.com\r\n"
            for field in request.headerFields { raw += "\(field.name.rawName): \(field.value)\r\n" }
            raw += "Content-Length: \(body.count)\r\n\r\n"
            let input = request.headerFields[HTTPField.Name("Signature-Input")!] ?? ""
            let signature = request.headerFields[HTTPField.Name("Signature")!] ?? ""
            return (input, signature, Array(raw.utf8) + body)
        }
    }

    private static func exportDocuments() throws -> [[UInt8]] {
        guard let key = Fixed.encryptionKey else { return [] }
        let keychain = Keychain.inMemory()
        try keychain.create(password: "seed", kdf: .scrypt(logN: 10, r: 8, p: 1))
        try keychain.add(.genericPassword(service: "com.example.app", account: "ada"), secret: Array("hunter2".utf8))
        try keychain.add(.genericPassword(service: "com.example.app", account: "grace", accessibility: .afterFirstUnlock), secret: [0, 1, 2, 3])
        let (file, _) = try keychain.exportItems(keychainPassword: "seed", protection: .key(key))
        // A signed (version 2) document too, so that the signer, audience and signature fields are reached.
        let (signed, _) = try keychain.exportItems(keychainPassword: "seed", protection: .key(key), signedBy: try SigningKey.generate(.ed25519))
        return [try CofferEncryption.decrypt(file, with: .key(key)), try CofferEncryption.decrypt(signed, with: .key(key))]
    }

    /// Certificates (a root, an intermediate and a server's, as a server presents them), and the server
    /// certificate's pin in every text form `Pin` reads. Made here with swift-certificates rather than
    /// CofferTesting's test PKI, which would bring SwiftNIO into the fuzz build.
    private static func certificates() throws -> [[UInt8]] {
        let now = Date(timeIntervalSince1970: TimeInterval(signingTime))
        func key(_ byte: UInt8) throws -> P256.Signing.PrivateKey { try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: byte, count: 32)) }
        let (rootKey, intermediateKey, leafKey) = try (key(6), key(7), key(8))
        let rootName = try DistinguishedName { CommonName("Fuzz Root CA") }
        let intermediateName = try DistinguishedName { CommonName("Fuzz Intermediate CA") }
        func certificate(_ serial: Int, key: P256.Signing.PrivateKey, subject: DistinguishedName, issuer: DistinguishedName,
                         signedBy issuerKey: P256.Signing.PrivateKey, extensions: Certificate.Extensions) throws -> [UInt8] {
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(bytes: [UInt8(serial)]), publicKey: .init(key.publicKey),
                notValidBefore: now, notValidAfter: now + 86_400, issuer: issuer, subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(issuerKey))
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        let authority = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        let root = try certificate(1, key: rootKey, subject: rootName, issuer: rootName, signedBy: rootKey, extensions: authority)
        let intermediate = try certificate(2, key: intermediateKey, subject: intermediateName, issuer: rootName, signedBy: rootKey, extensions: authority)
        let leaf = try certificate(3, key: leafKey, subject: try DistinguishedName { CommonName("localhost") }, issuer: intermediateName,
                                   signedBy: intermediateKey, extensions: try Certificate.Extensions {
                                       Critical(BasicConstraints.notCertificateAuthority)
                                       Critical(KeyUsage(digitalSignature: true))
                                       try ExtendedKeyUsage([.serverAuth])
                                       SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                                   })
        let chainCertificate = try ChainCertificate(der: leaf)
        let base64 = chainCertificate.publicKeyPin.base64
        let pins = [base64, "sha256/" + base64, "pin-sha256=\"\(base64)\"", chainCertificate.certificatePin.description]
        return [leaf, intermediate, root] + pins.map { Array($0.utf8) }
    }
}
