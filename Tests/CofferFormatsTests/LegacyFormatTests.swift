import CofferCore
import CofferCrypto
@testable import CofferFormats
import CofferTestSupport
import CofferTesting
import Crypto
import Foundation
import Testing

/// The RNCryptor v3 vectors, loaded from Tests/Vectors/rncryptor (see its README).
struct RNCryptorVectors: Decodable {
    struct Vector: Decodable {
        let title: String
        let password: String?
        let salt_hex: String?
        let key_hex: String?
        let enc_key_hex: String?
        let hmac_key_hex: String?
        let enc_salt_hex: String?
        let hmac_salt_hex: String?
        let iv_hex: String?
        let plaintext_hex: String?
        let ciphertext_hex: String?
    }
    let count: Int
    let vectors: [Vector]
}

@Suite("RNCryptor v3")
struct RNCryptorTests {
    @Test func kdfVectors() throws {
        let file = try TestVectors.load(RNCryptorVectors.self, from: "rncryptor/v3/kdf.json")
        #expect(file.vectors.count == 6)
        for vector in file.vectors {
            let key = try RNCryptor.deriveKeyBytes(password: Array((vector.password ?? "").utf8), salt: Hex.decode(vector.salt_hex ?? ""))
            #expect(Hex.encode(key) == vector.key_hex, "\(vector.title)")
        }
    }

    @Test func keyVectors() throws {
        let file = try TestVectors.load(RNCryptorVectors.self, from: "rncryptor/v3/key.json")
        #expect(file.vectors.count == 4)
        for vector in file.vectors {
            let keys = try RNCryptor.Keys(encryptionKey: Hex.decode(vector.enc_key_hex ?? ""), hmacKey: Hex.decode(vector.hmac_key_hex ?? ""))
            let plaintext = try Hex.decode(vector.plaintext_hex ?? "")
            let message = try Hex.decode(vector.ciphertext_hex ?? "")
            #expect(try RNCryptor.decrypt(message, with: .keys(keys)) == plaintext, "\(vector.title)")
            let encrypted = try RNCryptor.encrypt(plaintext, with: .keys(keys), encryptionSalt: [], hmacSalt: [], iv: Hex.decode(vector.iv_hex ?? ""))
            #expect(encrypted == message, "\(vector.title)")
        }
    }

    @Test func passwordVectors() throws {
        let file = try TestVectors.load(RNCryptorVectors.self, from: "rncryptor/v3/password.json")
        #expect(file.vectors.count == 6)
        for vector in file.vectors {
            let password = Array((vector.password ?? "").utf8)
            let plaintext = try Hex.decode(vector.plaintext_hex ?? "")
            let message = try Hex.decode(vector.ciphertext_hex ?? "")
            #expect(try RNCryptor.decrypt(message, with: .password(password)) == plaintext, "\(vector.title)")
            let encrypted = try RNCryptor.encrypt(
                plaintext, with: .password(password), encryptionSalt: Hex.decode(vector.enc_salt_hex ?? ""),
                hmacSalt: Hex.decode(vector.hmac_salt_hex ?? ""), iv: Hex.decode(vector.iv_hex ?? "")
            )
            #expect(encrypted == message, "\(vector.title)")
            // Streaming decryption agrees.
            var streamed: [UInt8] = []
            try RNCryptor.decrypt(source: MemorySource(message), with: .password(password)) { streamed.append(contentsOf: $0) }
            #expect(streamed == plaintext)
        }
    }

    @Test func tamperingAndWrongPasswordsAreRejected() throws {
        let message = try RNCryptor.encrypt(Fixtures.randomBytes(count: 100), with: .password(Array("pw".utf8)))
        for offset in message.indices {
            var tampered = message
            tampered[offset] ^= 0x10
            #expect(throws: CofferFormatsError.self, "offset \(offset)") { try RNCryptor.decrypt(tampered, with: .password(Array("pw".utf8))) }
        }
        #expect(throws: CofferFormatsError.authenticationFailed) { try RNCryptor.decrypt(message, with: .password(Array("nope".utf8))) }
        #expect(throws: CofferFormatsError.self) { try RNCryptor.decrypt(Array(message.dropLast(1)), with: .password(Array("pw".utf8))) }
    }

    @Test(arguments: [0, 1, 15, 16, 17, 65_535, 65_536, 200_000])
    func streamingRoundTrips(size: Int) throws {
        let plaintext = Fixtures.randomBytes(count: size)
        let keys = try RNCryptor.Keys(encryptionKey: Fixtures.randomBytes(count: 32), hmacKey: Fixtures.randomBytes(count: 32))
        let message = try RNCryptor.encrypt(plaintext, with: .keys(keys))
        #expect(try RNCryptor.decrypt(message, with: .keys(keys)) == plaintext)
    }
}

@Suite("OpenSSL enc")
struct OpenSSLEncTests {
    @Test(arguments: [0, 1, 16, 100_000])
    func roundTrips(size: Int) throws {
        let plaintext = Fixtures.randomBytes(count: size)
        let sealed = try OpenSSLEnc.encrypt(plaintext, password: Array("pw".utf8), iterations: 1000)
        #expect(sealed.starts(with: Array("Salted__".utf8)))
        #expect(try OpenSSLEnc.decrypt(sealed, password: Array("pw".utf8), iterations: 1000) == plaintext)
    }

    @Test(.enabled(if: CommandRunner.isAvailable("openssl")))
    func interoperatesWithOpenSSLBothWays() async throws {
        let folder = try TemporaryDirectory()
        let plaintext = Fixtures.randomBytes(count: 300_001)
        try folder.write(plaintext, to: "plain")
        try folder.write("s3cret\n", to: "pass")
        try folder.write(try OpenSSLEnc.encrypt(plaintext, password: Array("s3cret".utf8)), to: "ours.enc")
        let decrypted = try await CommandRunner.run(
            "openssl", ["enc", "-d", "-aes-256-cbc", "-pbkdf2", "-iter", "10000", "-in", "ours.enc", "-pass", "file:pass"],
            currentDirectory: folder.path
        )
        #expect(decrypted.status == 0, "\(decrypted.standardError)")
        #expect(decrypted.standardOutput == plaintext)
        let encrypted = try await CommandRunner.run(
            "openssl", ["enc", "-aes-256-cbc", "-pbkdf2", "-iter", "10000", "-in", "plain", "-pass", "file:pass"],
            currentDirectory: folder.path
        )
        #expect(try OpenSSLEnc.decrypt(encrypted.standardOutput, password: Array("s3cret".utf8)) == plaintext)
        #expect(throws: CofferFormatsError.self) { try OpenSSLEnc.decrypt(encrypted.standardOutput, password: Array("wrong".utf8)) }
    }
}

/// Wycheproof vectors through the AEAD (`EncryptionCipher.aead`, what every segment is sealed with) and CBC
/// code paths Coffer's formats use: AES-256-GCM and
/// ChaCha20-Poly1305 with 96-bit nonces and 128-bit tags, AES-256-CBC with PKCS#7 padding. Groups with
/// other key, nonce or tag sizes exercise nothing Coffer uses and are skipped by design.
@Suite("Cipher vectors")
struct CipherVectorTests {
    @Test(arguments: [("aes_gcm_test.json", EncryptionCipher.aes256GCM), ("chacha20_poly1305_test.json", .chaCha20Poly1305)])
    func aead(file name: String, cipher: EncryptionCipher) throws {
        let file = try TestVectors.load(WycheproofCipherFile.self, from: "wycheproof/testvectors_v1/\(name)")
        var checked = 0
        for group in file.testGroups where group.keySize == 256 && group.ivSize == 96 && group.tagSize == 128 {
            for test in group.tests {
                let key = try AEADKey(bytes: Hex.decode(test.key))
                let nonce = try Hex.decode(test.iv)
                let aad = try Hex.decode(test.aad ?? "")
                let ciphertext = try Hex.decode(test.ct)
                let tag = try Hex.decode(test.tag ?? "")
                var opened: [UInt8]? = []
                do {
                    try ciphertext.withUnsafeBytes { ct in
                        try tag.withUnsafeBytes { tagBytes in
                            try cipher.aead.open(ciphertext: ct, tag: tagBytes, key: key, nonce: nonce, additionalData: aad) {
                                opened?.append(contentsOf: $0)
                            }
                        }
                    }
                } catch {
                    opened = nil
                }
                if test.result == "valid" {
                    let expected = try Hex.decode(test.msg)
                    #expect(opened == expected, "tcId \(test.tcId)")
                    var sealed: [UInt8] = []
                    try Hex.decode(test.msg).withUnsafeBytes { message in
                        try cipher.aead.seal(message, key: key, nonce: nonce, additionalData: aad) { sealed.append(contentsOf: $0) }
                    }
                    #expect(sealed == ciphertext + tag, "tcId \(test.tcId)")
                } else {
                    #expect(opened == nil, "tcId \(test.tcId): \(test.comment)")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test func aesCBCPKCS5() throws {
        let file = try TestVectors.load(WycheproofCipherFile.self, from: "wycheproof/testvectors_v1/aes_cbc_pkcs5_test.json")
        var checked = 0
        for group in file.testGroups where group.keySize == 256 {
            for test in group.tests {
                let key = SymmetricKey(data: try Hex.decode(test.key))
                let iv = try Hex.decode(test.iv)
                let ciphertext = try Hex.decode(test.ct)
                var decryptor = CBCDecryptor(key: key, iv: iv, trailer: 0)
                var output: [UInt8] = []
                var failed = false
                do {
                    try ciphertext.withUnsafeBytes { try decryptor.update($0, consumed: { _ in }, output: { output.append(contentsOf: $0) }) }
                    _ = try decryptor.finish(consumed: { _ in }, output: { output.append(contentsOf: $0) })
                } catch {
                    failed = true
                }
                if test.result == "valid" {
                    let expected = try Hex.decode(test.msg)
                    #expect(!failed && output == expected, "tcId \(test.tcId)")
                    var encryptor = CBCEncryptor(key: key, iv: iv)
                    var sealed: [UInt8] = []
                    try Hex.decode(test.msg).withUnsafeBytes { try encryptor.update($0, output: { sealed.append(contentsOf: $0) }) }
                    try encryptor.finish(output: { sealed.append(contentsOf: $0) })
                    #expect(sealed == ciphertext, "tcId \(test.tcId)")
                } else {
                    #expect(failed, "tcId \(test.tcId): \(test.comment)")
                }
                checked += 1
            }
        }
        #expect(checked == 72)
    }
}
