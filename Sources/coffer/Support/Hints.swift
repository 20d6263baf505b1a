/// `hint:` lines that more than one command prints.
enum Hint {
    /// For a pin that does not parse: where a good one comes from.
    static let pinText = "'coffer pin of FILE' prints the pin of a certificate or public key"
    /// For a file whose key derivation costs more than the limits allow.
    static let decryptionCost = "if you trust the file, raise the limit with --max-scrypt-log-n (scrypt) or --max-iterations (PBKDF2); a hostile file can ask for any amount of work"
}
