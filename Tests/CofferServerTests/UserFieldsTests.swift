@testable import CofferServer
import Foundation
import Testing

/// `POST /register_user`'s field checks: the byte-level path for printable ASCII answers as the
/// character-level path it skips (which is what the route ran before).
@Suite("User fields")
struct UserFieldsTests {
    static let edges: [String] = [
        "", "@", "a@", "@b", "a@b", "ada@example.com", " ada@example.com", "ada@example.com ", "\tada@example.com\t",
        "a b@c", "a@b c", "a\t@b", "a\n@b", "a@b\r\n", "\r\n", " ", "ada@@example.com", "@@", "a@b@c",
        String(repeating: "a", count: 250) + "@b.c", String(repeating: "a", count: 251) + "@b.c", String(repeating: "a", count: 252) + "@b.c",
        " " + String(repeating: "a", count: 250) + "@b.c ", "ádá@example.com", "ada@exämple.com", "ada@example.com\u{A0}",
        "\u{A0}ada@example.com", "ada\u{2003}@example.com", "ada@example.com\u{0301}", "e\u{0301}@x", "\u{7F}a@b", "a@b\u{0}",
        "Ada Lovelace", String(repeating: "x", count: 200), String(repeating: "x", count: 201), String(repeating: "é", count: 200),
        String(repeating: "é", count: 201), String(repeating: "e\u{0301}", count: 200), "\r\n" + String(repeating: "x", count: 199),
        "\u{1F469}\u{200D}\u{1F4BB}", "~!#$%^&*()_+{}|:\"<>?`-=[]\\;',./", "   ", " x ", "a@@b", "\u{2800}", "\u{3000}", "\u{0301}", "f@.", "f@..", "f@.x",
    ]

    static func printableASCII(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(" @@@ab.-~!\"".utf8) + Array(0x20...0x7E)
        return String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
    }

    @Test func bothPathsGiveOneAnswer() {
        let random = (0..<2_000).map { Self.printableASCII(length: $0 % 300) }
        for text in Self.edges + random {
            #expect(UserFields.email(text) == UserFields.anyEmail(text), "email \(text.debugDescription)")
            #expect(UserFields.name(text) == UserFields.anyName(text), "name \(text.debugDescription)")
        }
    }

    @Test func addressesAreNormalizedAndNamesChecked() {
        #expect(UserFields.email("ada@example.com") == .success("ada@example.com"))
        #expect(UserFields.email("Ada@Example.COM") == .success("Ada@example.com"), "the domain is lowercased, the local part kept")
        #expect(UserFields.email("  ada@example.com ") == .success("ada@example.com"), "spaces at the ends are trimmed")
        #expect(UserFields.email("jose\u{301}@EXAMPLE.com") == .success("jos\u{E9}@example.com"), "NFC")
        #expect(UserFields.email("ada @example.com") == .failure(.email))
        #expect(UserFields.email("ada@") == .failure(.email))
        #expect(UserFields.emailKey("Ada@example.com") == UserFields.emailKey("ADA@EXAMPLE.COM"))
        #expect(UserFields.emailKey("jose\u{301}@example.com") == UserFields.emailKey("JOS\u{C9}@example.com"))
        #expect(UserFields.name("Ada") == .success("Ada"))
        #expect(UserFields.name("") == .failure(.name))
        #expect(UserFields.name(String(repeating: "é", count: 200)) == .success(String(repeating: "é", count: 200)))
        #expect(UserFields.name(String(repeating: "e\u{301}", count: 200)) == .success(String(repeating: "\u{E9}", count: 200)), "NFC")
        #expect(UserFields.name(String(repeating: "x", count: 201)) == .failure(.name))
    }

    /// Sizes are bytes: one "character" of a letter and 31,000 combining marks (62 KB) was a name of one
    /// character, and an address of 62 KB passed as one of 254 characters.
    @Test func sizesAreBytes() {
        let marks = String(repeating: "\u{301}", count: 31_000)
        #expect(UserFields.name("a" + marks) == .failure(.name))
        #expect(UserFields.email("a" + marks + "@example.com") == .failure(.email))
        // At the limits: 30 marks on one character; 200 characters of four bytes each (800 bytes).
        let thirty = "x" + String(repeating: "\u{301}\u{302}\u{303}", count: 10)
        #expect(UserFields.name(thirty).map(\.utf8.count) == .success(thirty.precomposedStringWithCanonicalMapping.utf8.count))
        #expect(UserFields.name(thirty + "\u{304}") == .failure(.name))
        let wide = String(repeating: "\u{1F600}", count: 200)
        #expect(UserFields.name(wide) == .success(wide))
        #expect(UserFields.name(wide + "\u{1F600}") == .failure(.name))
        // An address of 254 bytes of UTF-8 (two bytes each for é) passes; one more byte does not.
        let local = String(repeating: "\u{E9}", count: 120) + "@" + String(repeating: "b", count: 10) + ".c"
        #expect(local.utf8.count == 253)
        #expect(UserFields.email("a" + local) == .success("a" + local))
        #expect(UserFields.email("aa" + local) == .failure(.email))
        // Counted as stored: the domain's lowercasing lengthens `İ` (two bytes) to `i̇` (three), so 253
        // bytes sent were 371 stored.
        let dotted = "xxxxxx@" + String(repeating: "\u{130}", count: 120) + ".com"
        #expect(dotted.utf8.count == 251)
        #expect(UserFields.email(dotted) == .failure(.email))
    }

    /// Addresses that reach one mailbox compare equal: default case folding of the local part, the
    /// domain mapped (fullwidth forms, ideographic full stops, `xn--` labels, a trailing dot); the
    /// dotless `ı` and another script's look-alike stay apart. The byte-level path for ASCII gives what
    /// the Unicode path gives.
    @Test func addressesCompareAsMailSystemsCompareThem() {
        let same: [[String]] = [
            ["Straße@example.com", "STRASSE@example.com", "strasse@EXAMPLE.com"],
            ["ΟΔΟΣ@example.com", "οδος@example.com", "οδοσ@example.com"],
            ["ada@ｅｘａｍｐｌｅ.com", "ada@example.com", "ada@example.com.", "ada@example。com", "ADA@Example.COM"],
            ["ada@bücher.example", "ada@xn--bcher-kva.example", "ada@XN--BCHER-KVA.EXAMPLE", "ada@BÜCHER.example."],
            ["İx@example.com", "i\u{307}x@example.com"],
        ]
        for spellings in same {
            let keys = Set(spellings.map(UserFields.emailKey))
            #expect(keys.count == 1, "\(spellings): \(keys)")
        }
        #expect(UserFields.emailKey("ıx@example.com") != UserFields.emailKey("ix@example.com"))
        #expect(UserFields.emailKey("\u{430}da@example.com") != UserFields.emailKey("ada@example.com"), "Cyrillic а")
        #expect(UserFields.emailKey("ada@xn--not-valid-!.example") == "ada@xn--not-valid-!.example")
        // Found from outside: `xn--` labels that are no valid A-label decoded to another domain's name
        // (all ASCII; an uppercase letter; a decomposed or fullwidth letter), and a dot leader made a dot.
        for (other, domain) in [
            ("victim@xn--example-.com", "victim@example.com"), ("a@xn--bcher-2pa.example", "a@bücher.example"),
            ("a@xn--bucher-xyd.example", "a@bücher.example"), ("a@xn--cher-zra77610b.example", "a@bücher.example"),
            ("victim@example\u{2024}com", "victim@example.com"),
        ] {
            #expect(UserFields.emailKey(other) != UserFields.emailKey(domain), "\(other)")
        }
        #expect(UserFields.email("victim@example\u{2024}com") == .failure(.email))
        #expect(UserFields.email("victim@example\u{FE52}com") == .failure(.email))
        // A domain that its mapping turns into no domain, or into one with a second `@` or a space, is
        // no address (each was stored as a user).
        for refused in ["f@.", "m@a\u{FE6B}b.com", "f@b\u{FF20}example.com", "m@\u{FDFA}.com"] {
            #expect(UserFields.email(refused) == .failure(.email), "\(refused.debugDescription)")
        }
        for text in Self.edges + (0..<2_000).map({ Self.printableASCII(length: $0 % 300) }) + ["a@xn--bcher-kva.de", "A@B.", "x@XN--MNCHEN-3YA.DE"] {
            #expect(UserFields.emailKey(text) == UserFields.anyEmailKey(text), "\(text.debugDescription)")
        }
    }

    /// Control, format and separator characters are refused in both fields, naming the character.
    /// The outside attack on issue 42's fix added the invisible ones that are no control or format
    /// character: Hangul fillers, the combining grapheme joiner, variation selectors, noncharacters and
    /// private use.
    @Test(arguments: [
        "\u{0}", "\n", "\r", "\t", "\u{7F}", "\u{85}", "\u{202E}", "\u{2066}", "\u{200B}", "\u{FEFF}", "\u{2028}", "\u{2029}",
        "\u{3164}", "\u{115F}", "\u{034F}", "\u{FE0F}", "\u{FFFE}", "\u{FFFF}", "\u{E000}", "\u{F0000}", "\u{E0001}",
        "\u{2800}", "\u{FFFC}", "\u{1D159}",
    ])
    func hostileCharactersAreRefused(character: String) throws {
        let scalar = try #require(character.unicodeScalars.first)
        for (field, result) in [("name", UserFields.name("Ad\(character)a")), ("email", UserFields.email("ad\(character)a@example.com"))] {
            guard case .failure(let refusal) = result else {
                Issue.record("\(field) with U+\(String(scalar.value, radix: 16)) was accepted")
                continue
            }
            #expect(refusal.reason == "invalid-request" && refusal.detail.contains(String(format: "U+%04X", scalar.value)), "\(refusal)")
        }
    }

    /// A name that shows as nothing, and an address with two `@`, are refused (the outside attack found
    /// a name of U+3164 alone, and `a@@b`, accepted).
    @Test func blankNamesAndAddressesWithTwoAtSignsAreRefused() {
        for blank in ["   ", "\u{3000}", " \u{3000} ", "\u{0301}", "\u{0301}\u{0300}", " \u{0301}"] {
            #expect(UserFields.name(blank) == .failure(.name), "\(blank.debugDescription)")
        }
        for name in ["Ada Lovelace", "Zoë", "José", "李白", "Ἀριστοτέλης", "عمر", "Ada 🚀"] {
            #expect(UserFields.name(name) == .success(name.precomposedStringWithCanonicalMapping), "\(name)")
        }
        for address in ["a@@b", "a@b@c", "a@b@", "ä@@b"] {
            #expect(UserFields.email(address) == .failure(.email), "\(address)")
        }
    }
}
