import CofferCore
import CofferCrypto
import CofferFormats
import Foundation
import Testing

/// The representation-named API: each property writes the very bytes `representation(as:)` writes for
/// its format, each initialiser reads exactly that format back, and refuses the others.
@Suite("Key representations by name")
struct KeyRepresentationTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test(arguments: KeyFormatTests.types)
    func publicRepresentationsRoundTrip(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type).verifyingKey
        #expect(try VerifyingKey(derRepresentation: key.derRepresentation) == key)
        #expect(try VerifyingKey(pemRepresentation: key.pemRepresentation) == key)
        #expect(key.pemRepresentation == Self.text(try key.representation(as: .spki)))
        #expect(try VerifyingKey(jwkRepresentation: key.jwkRepresentation) == key)
        #expect(try key.jwkRepresentation == Self.text(try key.representation(as: .jwk)))
        let formats = KeyFormatTests.publicFormats(for: type)
        if formats.contains(.pkcs1Public) {
            #expect(try VerifyingKey(pkcs1DERRepresentation: key.pkcs1DERRepresentation) == key)
            #expect(try key.pkcs1DERRepresentation == key.representation(as: .pkcs1Public, encoding: .der))
        } else {
            #expect(throws: CofferFormatsError.self) { try key.pkcs1DERRepresentation }
        }
        if formats.contains(.appleExternal) {
            #expect(try VerifyingKey(appleExternalRepresentation: key.appleExternalRepresentation) == key)
            #expect(try key.appleExternalRepresentation == key.representation(as: .appleExternal))
        } else {
            #expect(throws: CofferFormatsError.unsupported) { try key.appleExternalRepresentation }
        }
        if formats.contains(.openSSH) {
            let line = try key.openSSHRepresentation(comment: "ci")
            #expect(try VerifyingKey(openSSHRepresentation: line) == key)
            #expect(line + "\n" == Self.text(try key.representation(as: .openSSH, comment: "ci")))
        }
    }

    @Test(arguments: KeyFormatTests.types)
    func privateRepresentationsRoundTrip(type: KeyAlgorithm) throws {
        let key = try SigningKey.generate(type)
        #expect(try SigningKey(pkcs8DERRepresentation: key.pkcs8DERRepresentation).verifyingKey == key.verifyingKey)
        #expect(try SigningKey(pemRepresentation: key.pemRepresentation).verifyingKey == key.verifyingKey)
        #expect(try key.pemRepresentation == Self.text(try key.representation(as: .pkcs8)))
        #expect(try SigningKey(jwkRepresentation: key.jwkRepresentation).verifyingKey == key.verifyingKey)
        let formats = KeyFormatTests.formats(for: type)
        if formats.contains(.pkcs1Private) {
            #expect(try SigningKey(pkcs1DERRepresentation: key.pkcs1DERRepresentation).verifyingKey == key.verifyingKey)
            #expect(try SigningKey(pemRepresentation: Self.text(key.representation(as: .pkcs1Private))).verifyingKey == key.verifyingKey)
        }
        if formats.contains(.sec1) {
            #expect(try SigningKey(sec1DERRepresentation: key.sec1DERRepresentation).verifyingKey == key.verifyingKey)
            #expect(try SigningKey(pemRepresentation: Self.text(key.representation(as: .sec1))).verifyingKey == key.verifyingKey)
        } else {
            #expect(throws: CofferFormatsError.self) { try key.sec1DERRepresentation }
        }
        if formats.contains(.appleExternal) {
            #expect(try SigningKey(appleExternalRepresentation: key.appleExternalRepresentation).verifyingKey == key.verifyingKey)
        }
    }

    @Test func encryptedPKCS8InPEMAndDER() throws {
        let key = try SigningKey.generate(.p256)
        let password = Array("correct horse".utf8)
        for encoding in [KeyEncoding.pem, .der] {
            let bytes = try key.encryptedPKCS8Representation(password: password, kdf: .scrypt(logN: 10, r: 8, p: 1), encoding: encoding)
            #expect(try SigningKey(encryptedPKCS8Representation: bytes, password: password).verifyingKey == key.verifyingKey)
            #expect(throws: CofferFormatsError.wrongPassword) { try SigningKey(encryptedPKCS8Representation: bytes, password: Array("no".utf8)) }
            let limits = PasswordKDFLimits(maximumScryptLogN: 9)
            #expect(throws: CofferFormatsError.costTooHigh) { try SigningKey(encryptedPKCS8Representation: bytes, password: password, limits: limits) }
        }
        #expect(throws: CofferFormatsError.self) { try key.encryptedPKCS8Representation(password: []) }
    }

    /// Strict means strict: a representation-named initialiser never guesses, so another format or the
    /// other half of a key pair is a typed refusal, not a quiet conversion.
    @Test func initialisersReadOnlyTheirOwnFormat() throws {
        let key = try SigningKey.generate(.p256)
        let publicPEM = key.verifyingKey.pemRepresentation
        let privatePEM = try key.pemRepresentation
        let mislabelled = #expect(throws: CofferFormatsError.self) { try VerifyingKey(pemRepresentation: privatePEM) }
        #expect(mislabelled?.reason.contains("'PRIVATE KEY'") == true)
        #expect(throws: CofferFormatsError.self) { try SigningKey(pemRepresentation: publicPEM) }
        let privateJWK = try key.jwkRepresentation
        #expect(throws: CofferFormatsError.wrongKeyKind) { try VerifyingKey(jwkRepresentation: privateJWK) }
        let publicJWK = try key.verifyingKey.jwkRepresentation
        #expect(throws: CofferFormatsError.self) { try SigningKey(jwkRepresentation: publicJWK) }
        #expect(throws: CofferFormatsError.self) { try SigningKey(sec1DERRepresentation: key.pkcs8DERRepresentation) }
        #expect(throws: CofferFormatsError.self) { try VerifyingKey(pkcs1DERRepresentation: key.verifyingKey.derRepresentation) }
        #expect(throws: CofferFormatsError.self) { try SigningKey(pemRepresentation: "") }
        #expect(throws: CofferFormatsError.self) { try VerifyingKey(openSSHRepresentation: String(repeating: "A", count: 2 << 20)) }
        // The detecting initialiser is the lenient one: it takes the public half of a private key.
        #expect(try VerifyingKey(importing: Array(privatePEM.utf8)) == key.verifyingKey)
    }
}
