import CofferCore
import CofferCrypto
@testable import CofferFormats
import Testing

/// OpenSSH's own private-key format (`openssh-key-v1`, PROTOCOL.key), read from a fixed key that
/// ssh-keygen made: the key, its comment and the fingerprint ssh-keygen prints; every truncation and
/// every damaged byte a typed error, never a crash or a different key.
@Suite("OpenSSH private keys")
struct OpenSSHPrivateKeyTests {
    /// `ssh-keygen -t ed25519 -N '' -C fixture@coffer` (OpenSSH 9.2). Its `ssh-keygen -lf` line:
    /// `256 SHA256:oLIVqA6Lm52FB1i84evZOCrNpKsU2FE/TNKVY/SUnkM fixture@coffer (ED25519)`.
    static let ed25519 = """
        -----BEGIN OPENSSH PRIVATE KEY-----
        b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
        QyNTUxOQAAACDTwtZ0zeR25RwCrXuoj9T1PjwPcm85m2PhRffVMt8TNgAAAJjYdzjm2Hc4
        5gAAAAtzc2gtZWQyNTUxOQAAACDTwtZ0zeR25RwCrXuoj9T1PjwPcm85m2PhRffVMt8TNg
        AAAEBNhRKvVYl0mLbP+figFWGaUbFk9gNtW79aQdZWhheNVtPC1nTN5HblHAKte6iP1PU+
        PA9ybzmbY+FF99Uy3xM2AAAADmZpeHR1cmVAY29mZmVyAQIDBAUGBw==
        -----END OPENSSH PRIVATE KEY-----

        """
    static let publicLine = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINPC1nTN5HblHAKte6iP1PU+PA9ybzmbY+FF99Uy3xM2 fixture@coffer"

    @Test func readsTheKeyItsCommentAndTheFingerprintSshKeygenPrints() throws {
        let imported = try ImportedKey(importing: Array(Self.ed25519.utf8))
        let key = try #require(imported.signingKey)
        #expect(imported.format == .openSSH && imported.formatDescription == "OpenSSH private key" && imported.comment == "fixture@coffer")
        #expect(try key.verifyingKey.sshKeygenFingerprintLine(comment: imported.comment)
            == "256 SHA256:oLIVqA6Lm52FB1i84evZOCrNpKsU2FE/TNKVY/SUnkM fixture@coffer (ED25519)")
        let line = try ImportedKey(importing: Array(Self.publicLine.utf8))
        #expect(line.verifyingKey == key.verifyingKey && line.comment == "fixture@coffer")
        let signature = try key.signature(for: Array("m".utf8))
        #expect(line.verifyingKey.isValidSignature(signature, for: Array("m".utf8)))
    }

    static func body() throws -> [UInt8] {
        try #require(try PEMBlock.blocks(in: ed25519).first?.der)
    }

    @Test func everyTruncationIsATypedError() throws {
        let body = try Self.body()
        for length in 0..<body.count {
            #expect(throws: CofferFormatsError.self, "\(length) bytes") { try OpenSSHCodec.readPrivate(Array(body.prefix(length))) }
        }
    }

    /// Every single-byte change is refused or, where the format cannot notice it (the check numbers
    /// changed alike, the comment, the key's padding byte values that happen to match), reads the same
    /// key: never another one.
    @Test func everyDamagedByteIsRefusedOrReadsTheSameKey() throws {
        let body = try Self.body()
        let original = try OpenSSHCodec.readPrivate(body).verifyingKey
        var refused = 0
        for index in body.indices {
            var damaged = body
            damaged[index] ^= 0x01
            do {
                let read = try OpenSSHCodec.readPrivate(damaged)
                #expect(read.verifyingKey == original, "byte \(index) changed the key that was read")
            } catch {
                refused += 1
            }
        }
        #expect(refused > body.count * 9 / 10, "only \(refused) of \(body.count) damaged bytes refused")
    }

    @Test func aPassphraseProtectedKeySaysHowToRemoveThePassphraseFromACopy() throws {
        var body = try Self.body()
        // "none" → "aes9" (the cipher name's length is kept): what ssh-keygen -N writes names aes256-ctr.
        let cipher = try #require(body.firstRange(of: Array("none".utf8)))
        body.replaceSubrange(cipher, with: Array("aes9".utf8))
        let error = try #require(throws: CofferFormatsError.unsupported) { try OpenSSHCodec.readPrivate(body) }
        #expect(error.reason.contains("ssh-keygen -p -N \"\" -f KEY.plain"))
    }
}
