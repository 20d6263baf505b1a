// Signing a file with RSA-4096 over its SHA-512 digest, and checking it in an app that ships only the
// public key.
import CofferCrypto
import CofferFormats
import Foundation

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let update = folder + "/update.bin"
try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: update))
// snippet.show

// At release time, on the build machine that holds the private key:
let privateKey = try SigningKey.generate(.rsa4096)
let options = SignatureOptions(hash: .sha512, rsaPadding: .pss)      // PSS: the padding to choose today
let signature = try privateKey.signature(forDigestOfFileAtPath: update, options: options)
let bundledPublicKey = privateKey.verifyingKey.pemRepresentation   // ships in the app

// In the app: the bundled public key, the downloaded file and its signature.
let publicKey = try VerifyingKey(pemRepresentation: bundledPublicKey)
guard try publicKey.isValidSignature(signature, forDigestOfFileAtPath: update, options: options) else {
    print("refusing the update: bad signature"); exit(1)
}
print("update signed by", publicKey.fingerprint.keyID)
