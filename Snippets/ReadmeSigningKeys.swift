// README: signing keys, signature files and key export.
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
try Data("app".utf8).write(to: URL(fileURLWithPath: "app.tar.gz"))
let passphrase = Array("passphrase".utf8)
let pemBytes = try SigningKey.generate(.ed25519).encryptedPKCS8Representation(password: passphrase)
func askUser() throws -> [UInt8] { passphrase }
// snippet.show
let key = try SigningKey(importing: pemBytes, password: { try askUser() })   // any format, detected
let signature = try SignatureFile.sign(fileAtPath: "app.tar.gz", with: key, comment: "v1.2")
if case .valid(let comment) = try signature.verify(fileAtPath: "app.tar.gz", with: key.verifyingKey) { print(comment) }
let jwk = try key.verifyingKey.jwkRepresentation   // or .pemRepresentation, .openSSHRepresentation()…
// snippet.hide
print(jwk)
