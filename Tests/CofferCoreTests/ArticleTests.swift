@testable import CofferCore
import Testing

@Suite("Indefinite articles in messages")
struct ArticleTests {
    @Test(arguments: [
        ("Ed25519", "an Ed25519"), ("RSA-2048", "an RSA-2048"), ("P-256", "a P-256"), ("ML-DSA-65", "an ML-DSA-65"),
        ("X25519", "an X25519"), ("HMAC-SHA-256", "an HMAC-SHA-256"), ("8-byte", "an 8-byte"), ("18-byte", "an 18-byte"),
        ("32-byte", "a 32-byte"), ("generic password", "a generic password"), ("internet password", "an internet password"),
        ("Signing", "a Signing"), ("Mac", "a Mac"),
    ])
    func readsAsEnglish(name: String, expected: String) {
        #expect(Article.indefinite(name) == expected)
    }
}
