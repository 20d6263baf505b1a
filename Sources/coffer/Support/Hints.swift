/// The `hint:` line for a pin that does not parse: where a good one comes from.
enum PinText {
    static let hint = "'coffer pin of FILE' prints the pin of a certificate or public key"
}

/// The `hint:` line for a file whose key derivation costs more than the limits allow.
enum DecryptionCost {
    static let hint = "if you trust the file, raise the limit with --max-scrypt-log-n (scrypt) or --max-iterations (PBKDF2); a hostile file can ask for any amount of work"
}
