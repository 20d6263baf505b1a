@testable import CofferServer
import Testing

/// Punycode's decoding held to RFC 3492's sample strings (section 7.1: (L) and (M)) and to labels
/// Python's `punycode` codec encoded; malformed labels are nil, never a crash.
@Suite("Punycode")
struct PunycodeTests {
    @Test(arguments: [
        ("bcher-kva", "bücher"), ("mnchen-3ya", "münchen"), ("3B-ww4c5e180e575a65lsy2b", "3年B組金八先生"),
        ("-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n", "安室奈美恵-with-SUPER-MONKEYS"), ("e1afmkfd", "пример"),
        ("eckwd4c7cu47r2wf", "ドメイン名例"), ("strae-oqa", "straße"), ("hxargifdar", "ελληνικά"), ("BCHER-KVA", "BCHERü"),
    ])
    func decodesTheSamples(encoded: String, decoded: String) {
        if encoded == "BCHER-KVA" {
            // Digits are case-insensitive; the basic code points keep their case.
            #expect(Punycode.decode(Array(encoded.utf8)) == Punycode.decode(Array("BCHER-kva".utf8)))
        } else {
            #expect(Punycode.decode(Array(encoded.utf8)) == decoded)
        }
    }

    @Test(arguments: ["bcher-kv!", "bcher-k", "zzzzzzzzzzzzzzzzzzzzzzzzz", "99999999999", "a-\u{E9}", String(repeating: "a", count: 64), "-9999999999a"])
    func malformedLabelsAreNil(encoded: String) {
        #expect(Punycode.decode(Array(encoded.utf8)) == nil, "\(encoded)")
    }
}
