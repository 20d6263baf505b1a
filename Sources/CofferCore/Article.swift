/// "a" or "an" before a name as it is read aloud, for messages that name an algorithm or a size
/// ("an Ed25519 key", "an RSA-2048 key", "a P-256 key", "an 8-byte tag", "an ML-DSA-65 key").
package enum Article {
    /// The name with its indefinite article.
    package static func indefinite(_ name: String) -> String {
        "\(startsWithVowelSound(name) ? "an" : "a") \(name)"
    }

    static func startsWithVowelSound(_ name: String) -> Bool {
        guard let first = name.first else { return false }
        if "aeiouAEIOU".contains(first) { return true }
        // An acronym's letter said by its name: "an RSA", "an HMAC", "an ML-DSA", "an X25519".
        let second = name.dropFirst().first
        if "FHLMNRSX".contains(first), second.map({ !$0.isLowercase }) ?? true { return true }
        // Numbers said "eight…", "eleven", "eighteen", "eighty…".
        let digits = name.prefix { $0.isNumber }
        if digits.hasPrefix("8") || digits == "11" || digits == "18" || (digits.count % 3 == 2 && (digits.hasPrefix("11") || digits.hasPrefix("18"))) { return true }
        return false
    }
}
