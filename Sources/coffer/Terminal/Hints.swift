/// `hint:` lines that more than one command prints.
enum Hint {
    /// For a pin that does not parse: where a good one comes from.
    static let pinText = "'coffer pin of FILE' prints the pin of a certificate or public key"
    /// For a file whose key derivation costs more than the limits allow.
    static let decryptionCost = "if you trust the file, raise the limit with --max-scrypt-log-n (scrypt: N=2^N at r=8, p=1, or the same work split otherwise) or --max-iterations (PBKDF2); a hostile file can ask for any amount of work"
    /// For a cost to write that the default readers would refuse.
    static let writingCost = "readers open at most the cost of --scrypt-log-n 19 and 2,000,000 PBKDF2 iterations by default; choose a cost within that"
    /// For an OpenSSL `enc` file whose padding did not check: the settings the format does not record.
    static func openSSLSettings(iterations: Int) -> String {
        "this read used -pbkdf2 -md sha256 -iter \(iterations); if 'openssl enc' wrote the file with another -iter, give --iter N. "
            + "A file written without -pbkdf2 (openssl warned 'deprecated key derivation used') or with another -md is not one Coffer reads: "
            + "'openssl enc -d -aes-256-cbc -md sha256 -in FILE' opens it (name its -md), then encrypt it again with 'coffer encrypt'"
    }
}
