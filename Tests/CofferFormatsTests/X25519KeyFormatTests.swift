import CofferCore
import CofferFormats
import Crypto
import Testing

/// X25519 keys (encryption recipients and identities) in every form `key convert` writes, held to
/// RFC 8037 §A.6's JWKs, which carry RFC 7748 §6.1's keys.
@Suite("X25519 key formats")
struct X25519KeyFormatTests {
    /// RFC 8037 §A.6: the ephemeral key (RFC 7748 §6.1 Alice's) and Bob's public key, as JWKs.
    static let ephemeral = #"{"kty":"OKP","crv":"X25519","d":"dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}"#
    static let bob = #"{"kty":"OKP","crv":"X25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08"}"#

    @Test func rfc8037JWKsReadAsTheRFC7748Keys() throws {
        let identity = try RecipientPrivateKey(importing: Array(Self.ephemeral.utf8))
        #expect(Hex.encode(identity.rawRepresentation) == "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        #expect(Hex.encode(identity.publicKey.rawRepresentation) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        let bob = try RecipientPublicKey(importing: Array(Self.bob.utf8))
        #expect(Hex.encode(bob.rawRepresentation) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        guard case .x25519(let privateKey) = identity, case .x25519(let publicKey) = bob else {
            Issue.record("not read as X25519 keys")
            return
        }
        let shared = try privateKey.sharedSecretFromKeyAgreement(with: publicKey).withUnsafeBytes { Array($0) }
        #expect(Hex.encode(shared) == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742", "RFC 7748 §6.1's shared secret")
        // A private JWK also reads as its public key (a recipient).
        #expect(try RecipientPublicKey(importing: Array(Self.ephemeral.utf8)) == identity.publicKey)
    }

    @Test func everyFormWrittenReadsBack() throws {
        let identity = RecipientPrivateKey.generateX25519()
        let recipient = identity.publicKey
        for form in [Array(recipient.pemRepresentation.utf8), recipient.derRepresentation, recipient.jwkRepresentation] {
            #expect(try RecipientPublicKey(importing: form) == recipient)
        }
        for form in [Array(identity.pemRepresentation.utf8), identity.pkcs8DERRepresentation, identity.jwkRepresentation] {
            #expect(try RecipientPrivateKey(importing: form).rawRepresentation == identity.rawRepresentation)
        }
        let jwk = String(decoding: recipient.jwkRepresentation, as: UTF8.self)
        #expect(jwk.contains(#""kty":"OKP""#) && jwk.contains(#""crv":"X25519""#) && !jwk.contains(#""d":"#))
        #expect(recipient.rawRepresentation.count == 32 && identity.rawRepresentation.count == 32)
    }

    @Test func damagedJWKsAreRefusedWithTypedErrors() throws {
        let cases = [
            #"{"kty":"OKP","crv":"X25519"}"#,
            #"{"kty":"OKP","crv":"X25519","x":"AAAA"}"#,
            #"{"kty":"OKP","crv":"X25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08=="}"#,
            // "d" of another key than "x".
            #"{"kty":"OKP","crv":"X25519","d":"dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08"}"#,
        ]
        for text in cases {
            #expect(throws: CofferFormatsError.self, "\(text)") { try RecipientPrivateKey(importing: Array(text.utf8)) }
        }
        #expect(throws: CofferFormatsError.wrongKeyKind) { try RecipientPrivateKey(importing: Array(Self.bob.utf8)) }
    }
}
