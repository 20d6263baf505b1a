import CofferCore
import CofferCrypto
import CofferFormats
import Testing

/// Recipients files (`coffer encrypt -R`): PEM blocks and one-line keys, comments skipped, Windows
/// text read the same; anything else refused with its line.
@Suite("Recipients files")
struct RecipientListTests {
    @Test func readsEveryFormAndSkipsComments() throws {
        let x25519 = RecipientPrivateKey.generateX25519().publicKey
        let p256 = RecipientPrivateKey.p256(.init()).publicKey
        let pem = PEMArmor.encode(x25519.derRepresentation, label: "PUBLIC KEY")
        let text = "\u{FEFF}# team\r\n\(pem.replacingOccurrences(of: "\n", with: "\r\n"))\r\n  # indented comment\n\(Base64.encode(p256.derRepresentation))\n\n"
        #expect(try RecipientList.parse(text) == [x25519, p256])
    }

    @Test func refusesWhatIsNotAKeyWithItsLine() throws {
        let good = Base64.encode(RecipientPrivateKey.generateX25519().publicKey.derRepresentation)
        for (text, line) in [("\(good)\nnot a key!\n", 2), ("# c\n-----BEGIN PUBLIC KEY-----\n\(good)\n", 2), ("\(good)\n{\"kty\":\"nope\"}\n", 2)] {
            let error = try #require(throws: CofferFormatsError.self) { try RecipientList.parse(text) }
            #expect(error.line == line, "\(error)")
        }
        #expect(throws: CofferFormatsError.self) { try RecipientList.parse("# only comments\n\n") }
        // An Ed25519 signing key is a key, but not a recipient.
        let ed = Base64.encode(try SigningKey.generate(.ed25519).verifyingKey.derRepresentation)
        let error = try #require(throws: CofferFormatsError.wrongKeyKind) { try RecipientList.parse(ed) }
        #expect(error.line == 1)
    }
}
