// AES-256 with a password stretched by PBKDF2, a random salt and a random nonce — and authenticated, so
// that a changed byte is refused instead of decrypted. The format keeps the salt, the iteration count and
// the nonces; nothing is reused, and nothing has to be stored beside the file.
import CofferFormats

let password = Array("correct horse battery staple".utf8)
let secret = Array("the launch codes".utf8)

// PBKDF2-HMAC-SHA-256 at 600,000 iterations (OWASP's figure); `.default` chooses scrypt instead.
let sealed = try CofferEncryption.encrypt(secret, to: .password(password, .pbkdf2(iterations: 600_000)), cipher: .aes256GCM)
let opened = try CofferEncryption.decrypt(sealed, with: .password(password))
print(String(decoding: opened, as: UTF8.self))

// One changed bit and nothing comes out.
var tampered = sealed
tampered[tampered.count - 1] ^= 1
do {
    _ = try CofferEncryption.decrypt(tampered, with: .password(password))
    print("tampering went unnoticed")
} catch {
    print("refused:", error)
}
// For files written by the RNCryptor library on iOS (AES-256-CBC + HMAC, PBKDF2), see RNCryptor.decrypt.
