import CofferCore
import CofferCrypto
@testable import CofferFormats
import Crypto
import Testing

/// Files written by Coffer 2.0.0 (`coffer encrypt` of 2.0.0, before recipients became one protocol), one per
/// stanza type the key vector (``EncryptionFixedVectorTests``) does not hold, pinned here: every later
/// version must open them, re-encode their headers byte for byte, and wrap a file key into the same
/// stanza bytes for the same salt. The plaintext of each is "hello, coffer".
@Suite("Encrypted format vectors, one per stanza type")
struct EncryptionStanzaVectorTests {
    static let plaintext = Array("hello, coffer".utf8)
    static let password = Array("correct horse".utf8)
    static let x25519 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VuBCIEIAjw021PtMaK/FYMH+p9mwJFSO3LaJ82lKl5vIDOgjN/
        -----END PRIVATE KEY-----
        """
    static let p256 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZqhtg1t8VE8SpZFZ
        TLUmxEa6Lfkrkxc19lAoeWHWcYChRANCAAQD6xWnaYe1O2SRU9Yb2K7u4Q7T/BYY
        ZxDOvXzD0lYhiEdd407it+tmCqzVWdAAzBKiww+O0KG8Z/7O+CO+oZyk
        -----END PRIVATE KEY-----
        """

    /// scrypt N = 2^10, r = 8, p = 1, AES-256-GCM.
    static let scrypt = """
        434f46464552004501011001010043ca21084cd2dcf89aabcd6f39c331e2140a08018d32d4261ef6cf39b6d60260ecc06d\
        32bdffd90f0416015ecfed015fa8b53694554157fadd087a8d53170175974380f6d137bc1e1d5863495d623a179b674754\
        204052560583465366efcddd75ac61f304ae9d606d9facd8612eaf0d981d25ee073688e9658cfa2eeaaabd506f2d760725\
        48b9cf7ef52c3cfd61d1ce7c
        """
    /// PBKDF2-HMAC-SHA-256 at 600,000 iterations, AES-256-GCM.
    static let pbkdf2 = """
        434f464645520045010110010200440cd9b040c1e39fb16d81596fcb7db538000927c07669a7f9d9842d1b086853a36f64\
        3b906e807ef53c9042878dc55e08086634ef13145e3b0e06fc5ee88909c6f813d3b4acd1e12e7d0176bad88fd634f9ed26\
        c836d07115d337764bf870b2b0ed1fd1405e98dfc94ccb93c3a1cfebe4ac0dd8f635555da4ab9e4b28576b0da24879853c\
        1053e09a066903e26004dbf710
        """
    /// To the X25519 key above, AES-256-GCM.
    static let toX25519 = """
        434f4646455200450101100104005883ef976d26c22f0d04437ca50a4b3f1b83bba69204e63985677ceeb7ec0900b89286\
        28218e9cbf018359c016a69bb5f094317218b9267436b8baee4c8b03138edc95ee1491ddb4800a426690d986eb3ce91f34\
        45830d44cc04d8d682c61f3fe1180bffa272905c237f21016aac4c34aa4bdbcc4cb885bdce7b1e20c20a323fe2a8ff2e08\
        975fb80ff321b885939b836dca4bfc5f3f77eb6d34e764ccf319a6bc40fce0615b
        """
    /// To the P-256 key above, AES-256-GCM.
    static let toP256 = """
        434f464645520045010110010500795dfe665fecefc90304bc3c7dc9577b6cc6d11305927791c3b82b3356ae14542a4447\
        ac873e61046fdf018d602519b4fcff177b39ea6a839b553cf42470d22f0741eae0cbd90cf2985ee1688f8b9c8093806035\
        08a8a6d62f27b415abd02415660a0e030ac7c52a340e1a74ad8e8d34c142a9a20a93394ea7690dc46113ba85542331fd20\
        bc840ad4a7e6221e53dfe3b3ed914a00ffce249cb78c0a408a6d9d9c3fdcefa43ee4bffd49196628a87acdd9424810e2a6\
        40ee248317c279817ddb5605c90b113505
        """
    /// To both keys (X25519 first), ChaCha20-Poly1305.
    static let toBoth = """
        434f4646455200450102100204005883ef976d26c22f0d0a22f9811fc635fa02ffd8958e126861e97ba6d90c64cbc7da6a\
        765a0ca660191871dbfb29b5df2530b30e24ed03221bd8bd5c291a0951e556c48fcf63425ba84eb0f834f753d7b08ee032\
        2cf7b8f3640500795dfe665fecefc90304ffaa8d56b2e38b8b6ec808b6305b922828dfa6ee9958e18b01959d8689fb5faa\
        1d47934e93831f6695485ee41d4de400541b6ab21f33aecebdd7123d6721077f0aa2c26e1f4d57a5d886bb0a8cadf9f147\
        bc7d6dccf9f9f40448d3bc047dba3e749137634971622bc9418a54587fdabbbc11f851f9910da7f4058ae4e784bcf836be\
        e7170a6e78339980b3434ae01c4db9e1bae13fd19c25c5be35935ba75388dffb5581965dd76faf920d2090d5c3fb01f26f\
        c53e501c42a2583c3433
        """

    static func credentials() throws -> [(String, String, DecryptionCredential, [UInt8])] {
        let x25519 = try RecipientPrivateKey(importing: Array(Self.x25519.utf8))
        let p256 = try RecipientPrivateKey(importing: Array(Self.p256.utf8))
        return [
            ("scrypt", scrypt, .password(password), [1]),
            ("PBKDF2", pbkdf2, .password(password), [2]),
            ("X25519", toX25519, .identity(x25519), [4]),
            ("P-256", toP256, .identity(p256), [5]),
            ("both, X25519", toBoth, .identity(x25519), [4, 5]),
            ("both, P-256", toBoth, .identity(p256), [4, 5]),
        ]
    }

    @Test func filesFromEarlierReleasesOpen() throws {
        for (name, file, credential, types) in try Self.credentials() {
            let bytes = try Hex.decode(file)
            #expect(try CofferEncryption.decrypt(bytes, with: credential) == Self.plaintext, "\(name)")
            let source = MemorySource(bytes)
            let header = try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }
            #expect(header.stanzas.map(\.type) == types, "\(name)")
        }
    }

    /// The generic parser keeps every byte: the header re-encodes exactly as written.
    @Test func headersReEncodeByteForByte() throws {
        for (name, file, _, _) in try Self.credentials() {
            let bytes = try Hex.decode(file)
            let source = MemorySource(bytes)
            let header = try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }
            #expect(header.encoded == Array(bytes.prefix(header.encodedSize)), "\(name)")
        }
    }

    /// The password and key recipients write the same stanza bytes as 2.0.0 did for the same file key
    /// and salt (HPKE stanzas hold a fresh ephemeral key that no caller chooses: the vectors above hold them).
    @Test func passwordAndKeyStanzasAreWrittenAsBefore() throws {
        for file in [Self.scrypt, Self.pbkdf2] {
            let bytes = try Hex.decode(file)
            let source = MemorySource(bytes)
            let header = try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }
            let stanza = try #require(header.stanzas.first)
            let fileKey = try #require(try PasswordIdentity(password: Self.password).unwrap(header.stanzas, limits: PasswordKDFLimits()))
            let salt = Array(stanza.body[0..<16])
            let kdf: PasswordKDF
            if stanza.type == 1 {
                kdf = try ScryptStanza(stanza.body).kdf
            } else {
                kdf = .pbkdf2(iterations: Int(try PBKDF2Stanza(stanza.body).iterations))
            }
            let kek = try kdf.deriveForReading("the vector", password: Self.password, salt: salt, limits: PasswordKDFLimits(), malformed: .malformedCiphertext)
            let parameters = Array(stanza.body.dropLast(KeyWrap.wrappedLength))
            #expect(try KeyWrap.seal(fileKey, under: kek, type: stanza.type, parameters: parameters) == stanza)
        }
        let keyFile = try Hex.decode(EncryptionFixedVectorTests.file)
        let source = MemorySource(keyFile)
        let header = try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }
        let key = try #require(EncryptionFixedVectorTests.key)
        let stanza = try #require(header.stanzas.first)
        let fileKey = try #require(try key.unwrap(header.stanzas, limits: PasswordKDFLimits()))
        let kek = HKDF<SHA256>.deriveKey(inputKeyMaterial: key.key, salt: Array(stanza.body[8..<24]), info: Array("coffer-v1 key-wrap".utf8), outputByteCount: 32)
        #expect(try KeyWrap.seal(fileKey, under: kek, type: 3, parameters: Array(stanza.body[0..<24])) == stanza)
    }

    /// `coffer inspect`'s lines for each type, as 2.0.0 printed them.
    @Test func summariesAreUnchanged() throws {
        let summaries = try [Self.scrypt, Self.pbkdf2, Self.toBoth].map { file -> [String] in
            let source = MemorySource(try Hex.decode(file))
            return try EncryptedFileHeader.parse { try source.readPrefix(upTo: $0) }.stanzas.map(\.summary)
        }
        let x25519 = try RecipientPrivateKey(importing: Array(Self.x25519.utf8)).publicKey
        let p256 = try RecipientPrivateKey(importing: Array(Self.p256.utf8)).publicKey
        #expect(summaries == [
            ["password, scrypt N=2^10 r=8 p=1 (1024 KiB of memory)"],
            ["password, PBKDF2-HMAC-SHA-256, 600000 iterations"],
            ["X25519 recipient, key id \(Hex.encode(x25519.keyID))", "P-256 recipient, key id \(Hex.encode(p256.keyID))"],
        ])
    }
}
