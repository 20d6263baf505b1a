// An iOS app sends its public key as SecKeyCopyExternalRepresentation gives it: the bare X9.63 point,
// without the ASN.1 header (SubjectPublicKeyInfo) that servers and OpenSSL expect. Coffer reads Apple's
// bytes and writes the standard form; no header is glued on by hand.
import CofferCrypto
import CofferFormats

// snippet.hide
let appKey = try SigningKey.generate(.p256)
// snippet.show
// What the app sends: 65 bytes, 04 || X || Y.
let appleBytes = try appKey.verifyingKey.exported(as: .appleExternal, encoding: .der)

// On the server: say which half it is (97 bytes could be a P-384 public key or a P-256 private one).
let publicKey = try VerifyingKey(importing: appleBytes, appleKeyClass: .publicKey)
let pem = String(decoding: try publicKey.exported(as: .spki, encoding: .pem), as: UTF8.self)
print(appleBytes.count, "bytes from the app become:")
print(pem)
