// An iOS app sends its public key as SecKeyCopyExternalRepresentation gives it: the bare X9.63 point,
// without the ASN.1 header (SubjectPublicKeyInfo) that servers and OpenSSL expect. Coffer reads Apple's
// bytes and writes the standard form; no header is glued on by hand.
import CofferCrypto
import CofferFormats

// snippet.hide
let appKey = try SigningKey.generate(.p256)
// snippet.show
// What the app sends: 65 bytes, 04 || X || Y.
let appleBytes = try appKey.verifyingKey.appleExternalRepresentation

// On the server: read it as what it is (an Apple public key), and write the standard PEM.
let publicKey = try VerifyingKey(appleExternalRepresentation: appleBytes)
let pem = publicKey.pemRepresentation
print(appleBytes.count, "bytes from the app become:")
print(pem)
