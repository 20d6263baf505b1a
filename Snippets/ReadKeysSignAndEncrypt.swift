// The formats in one page: a key read from any encoding, a detached signature file, authenticated
// encryption to a recipient, and a checksum list.
// snippet.hide
import Foundation
// snippet.show
import CofferCrypto
import CofferFormats

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
guard FileManager.default.changeCurrentDirectoryPath(folder) else { exit(2) }
try Data("release".utf8).write(to: URL(fileURLWithPath: "release.tar.gz"))
let pemBytes = try SigningKey.generate(.p256).encryptedPKCS8Representation(password: Array("passphrase".utf8))
let jwkText = try SigningKey.generate(.ed25519).jwkRepresentation
let plaintext = Array("attack at dawn".utf8)
let listed = try DigestAlgorithm.sha256.hash(fileAtPath: "release.tar.gz")
try Data((ChecksumList.line(for: listed, path: "release.tar.gz") + "\n").utf8).write(to: URL(fileURLWithPath: "SHA256SUMS"))
// snippet.show
// Keys: PEM, DER, JWK, OpenSSH, SEC1, Apple's raw representation — detected by init(importing:),
// or read and written by name, as swift-crypto names them.
let imported = try ImportedKey(importing: pemBytes, password: { Array("passphrase".utf8) })
let key = try SigningKey(jwkRepresentation: jwkText)
let pem = key.verifyingKey.pemRepresentation

// A detached signature file for a release, and its check.
let signature = try SignatureFile.sign(fileAtPath: "release.tar.gz", with: key, comment: "release 1.2")
let verdict = try SignatureFile(parsing: signature.armored).verify(fileAtPath: "release.tar.gz", with: key.verifyingKey)

// Authenticated encryption to a password, a key or recipients' public keys.
let identity = RecipientPrivateKey.generateX25519()          // the recipient keeps this, and hands out identity.publicKey
let sealed = try CofferEncryption.encrypt(plaintext, to: .recipients([identity.publicKey]))
let opened = try CofferEncryption.decrypt(sealed, with: .identity(identity))

// A published checksum list, checked the way sha256sum -c does.
let summary = try ChecksumVerifier(algorithm: .sha256).verifyFiles(listedIn: "SHA256SUMS")
// snippet.hide
guard case .valid = verdict, opened == plaintext, summary.passed else { exit(1) }
print(imported, pem.count)
