import CofferCore
import CofferCrypto
import CofferFormats
import Crypto
import Testing

/// A recipient type of the test target's own, written against the public API only: proof that a new
/// way to open files is one new file plus its tests (docs/FORMAT-ENCRYPTION.md, "Stanza types").
///
/// The toy shares a 32-byte secret between writer and reader, names it by an 8-byte id, and seals the
/// file key with ChaCha20-Poly1305 under HKDF(secret). Its stanza type, 0xF0, is in the private-use
/// range a reader accepts without knowing it. Not a design to copy: a shared secret would stand alone.
struct ToySharedSecretRecipient: FileKeyRecipient {
    static let type: UInt8 = 0xF0
    let secret: SymmetricKey

    var id: [UInt8] { Array(SHA256.hash(data: secret.withUnsafeBytes { Array($0) }).prefix(8)) }
    var wrappingKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, info: Array("toy recipient".utf8), outputByteCount: 32)
    }
    var publicKeyInfo: [UInt8]? { nil }

    func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] {
        let box = try ChaChaPoly.seal(fileKey.withUnsafeKeyBytes { Array($0) }, using: wrappingKey, authenticating: [Self.type] + id)
        return [EncryptedFileHeader.Stanza(type: Self.type, body: id + Array(box.combined))]
    }
}

/// The toy's identity: opens the 0xF0 stanza that names its id, parsing the body itself.
struct ToySharedSecretIdentity: FileKeyIdentity {
    let recipient: ToySharedSecretRecipient
    var publicKeyInfo: [UInt8]? { nil }

    func unwrap(_ stanzas: [EncryptedFileHeader.Stanza], limits: PasswordKDFLimits) throws -> FileKey? {
        guard let stanza = EncryptedFileHeader.Stanza.candidates(in: stanzas, type: ToySharedSecretRecipient.type, keyID: recipient.id).first else {
            return nil
        }
        // id 8, nonce 12, sealed key 32, tag 16.
        guard stanza.body.count == 68 else {
            throw CofferFormatsError(.malformedCiphertext, "a toy stanza must be 68 bytes, found \(stanza.body.count)")
        }
        guard let box = try? ChaChaPoly.SealedBox(combined: stanza.body[8...]),
            let fileKey = try? ChaChaPoly.open(box, using: recipient.wrappingKey, authenticating: [ToySharedSecretRecipient.type] + recipient.id)
        else { throw CofferEncryption.authenticationFailure }
        return try FileKey(bytes: fileKey)
    }

    func noMatchingStanza(in stanzas: [EncryptedFileHeader.Stanza]) -> CofferFormatsError {
        EncryptedFileHeader.Stanza.notEncrypted(to: recipient.id, needs: stanzas)
    }
}

/// A recipient that writes whatever stanzas it is given: the engine must check them as a reader would.
struct RawStanzaRecipient: FileKeyRecipient {
    let stanzas: [EncryptedFileHeader.Stanza]
    var publicKeyInfo: [UInt8]? { [1] }
    func wrap(_ fileKey: FileKey) throws -> [EncryptedFileHeader.Stanza] { stanzas }
}

@Suite("A recipient type defined outside the library")
struct CustomRecipientTests {
    static let toy = ToySharedSecretRecipient(secret: SymmetricKey(size: .bits256))
    static let plaintext = Array("opened by a recipient the library never heard of".utf8)

    /// Inserts `stanza` as the header's last stanza (the MAC no longer holds; the parser refuses first).
    static func splice(_ stanza: EncryptedFileHeader.Stanza, into file: [UInt8]) -> [UInt8] {
        var stanzasEnd = 12
        for _ in 0..<file[11] { stanzasEnd += 3 + (Int(file[stanzasEnd + 1]) << 8 | Int(file[stanzasEnd + 2])) }
        var spliced = Array(file[..<stanzasEnd]) + [stanza.type, UInt8(stanza.body.count >> 8), UInt8(stanza.body.count & 0xFF)] + stanza.body
        spliced += file[stanzasEnd...]
        spliced[11] += 1
        return spliced
    }

    @Test func roundTripsThroughThePublicEngine() throws {
        for cipher in EncryptionCipher.allCases {
            let sealed = try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([Self.toy]), cipher: cipher)
            #expect(try CofferEncryption.decrypt(sealed, with: DecryptionCredential(ToySharedSecretIdentity(recipient: Self.toy))) == Self.plaintext)
            let other = ToySharedSecretIdentity(recipient: ToySharedSecretRecipient(secret: SymmetricKey(size: .bits256)))
            let error = try #require(throws: CofferFormatsError.noMatchingKey) { try CofferEncryption.decrypt(sealed, with: DecryptionCredential(other)) }
            #expect(error.reason.hasSuffix("it needs private-use stanza type 0xf0, 68 bytes"))
        }
    }

    @Test func sharesAFileWithPublicKeyRecipients() throws {
        let x25519 = RecipientPrivateKey.generateX25519()
        let sealed = try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([Self.toy, x25519.publicKey]))
        #expect(try CofferEncryption.decrypt(sealed, with: DecryptionCredential(ToySharedSecretIdentity(recipient: Self.toy))) == Self.plaintext)
        #expect(try CofferEncryption.decrypt(sealed, with: .identity(x25519)) == Self.plaintext)
    }

    /// An identity given only stanzas of other types finds none for it: `.noMatchingKey`, never a crash
    /// and never a file key.
    @Test func identitiesSkipStanzasOfOtherTypes() throws {
        let x25519 = RecipientPrivateKey.generateX25519()
        let toyFile = try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([Self.toy]))
        let credentials: [DecryptionCredential] = [.identity(x25519), .key(EncryptionKey.generate()), .password(Array("pw".utf8))]
        for credential in credentials {
            #expect(throws: CofferFormatsError.noMatchingKey, "\(credential.fileKeyIdentity)") { try CofferEncryption.decrypt(toyFile, with: credential) }
        }
        let recipientFile = try CofferEncryption.encrypt(Self.plaintext, to: .recipients([x25519.publicKey]))
        #expect(throws: CofferFormatsError.noMatchingKey) {
            try CofferEncryption.decrypt(recipientFile, with: DecryptionCredential(ToySharedSecretIdentity(recipient: Self.toy)))
        }
    }

    /// A password stands alone: a custom stanza beside it is refused when writing and when reading
    /// (before any key derivation).
    @Test func aCustomStanzaBesideAPasswordIsRefused() throws {
        let password = PasswordRecipient(password: Array("pw".utf8), kdf: .scrypt(logN: 10, r: 8, p: 1))
        #expect(throws: CofferFormatsError.invalidArgument) {
            try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([password, Self.toy]))
        }
        let passwordFile = try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([password]))
        let toyStanza = try Self.toy.wrap(FileKey(bytes: [UInt8](repeating: 7, count: 32)))[0]
        let mixed = Self.splice(toyStanza, into: passwordFile)
        let read = try #require(throws: CofferFormatsError.malformedCiphertext) {
            try CofferEncryption.decrypt(mixed, with: .password(Array("pw".utf8)), limits: PasswordKDFLimits(maximumScryptLogN: 9))
        }
        #expect(read.reason == "the header mixes ways of opening the file; it must hold one password, one key, or recipients only")
    }

    /// Types outside the registry and the private-use range are refused, when a recipient writes one
    /// and when a header holds one; a registered type's body is checked by its own rules.
    @Test func unknownTypesAndMalformedBodiesAreTypedErrors() throws {
        let x25519 = RecipientPrivateKey.generateX25519()
        let unknown = EncryptedFileHeader.Stanza(type: 6, body: [UInt8](repeating: 0, count: 20))
        let written = try #require(throws: CofferFormatsError.invalidArgument) {
            try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([RawStanzaRecipient(stanzas: [unknown])]))
        }
        #expect(written.reason == "unknown key stanza type 6")
        let recipientFile = try CofferEncryption.encrypt(Self.plaintext, to: .recipients([x25519.publicKey]))
        let cases: [(EncryptedFileHeader.Stanza, String)] = [
            (unknown, "unknown key stanza type 6"),
            (EncryptedFileHeader.Stanza(type: 0, body: []), "unknown key stanza type 0"),
            (EncryptedFileHeader.Stanza(type: 4, body: [UInt8](repeating: 0, count: 87)), "a X25519 recipient stanza must be 88 bytes, found 87"),
            (EncryptedFileHeader.Stanza(type: 5, body: []), "a P-256 recipient stanza must be 121 bytes, found 0"),
        ]
        for (stanza, reason) in cases {
            let error = try #require(throws: CofferFormatsError.malformedCiphertext) {
                try CofferEncryption.decrypt(Self.splice(stanza, into: recipientFile), with: .identity(x25519))
            }
            #expect(error.reason == reason)
        }
        // A private-use stanza the reader accepts but whose owner finds malformed: the owner's typed error.
        let short = EncryptedFileHeader.Stanza(type: 0xF0, body: Self.toy.id + [1, 2, 3])
        let toyFile = try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([RawStanzaRecipient(stanzas: [short])]))
        let error = try #require(throws: CofferFormatsError.self) {
            try CofferEncryption.decrypt(toyFile, with: DecryptionCredential(ToySharedSecretIdentity(recipient: Self.toy)))
        }
        #expect(error.reason == "a toy stanza must be 68 bytes, found 11")
    }

    /// Writing refuses stanza counts and sizes a reader refuses: none, more than 32, a body over 1024 bytes.
    @Test func theEngineChecksWhatRecipientsWrite() throws {
        let stanza = EncryptedFileHeader.Stanza(type: 0xF1, body: [1])
        let refused: [[EncryptedFileHeader.Stanza]] = [[], Array(repeating: stanza, count: 33), [EncryptedFileHeader.Stanza(type: 0xF1, body: [UInt8](repeating: 0, count: 1025))]]
        for stanzas in refused {
            #expect(throws: CofferFormatsError.invalidArgument) {
                try CofferEncryption.encrypt(Self.plaintext, to: EncryptionProtection([RawStanzaRecipient(stanzas: stanzas)]))
            }
        }
        #expect(EncryptedFileHeader.Stanza(type: 0xF1, body: [1, 2]).summary == "private-use stanza type 0xf1, 2 bytes")
    }
}
