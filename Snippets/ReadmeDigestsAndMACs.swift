// README: digests and HMAC.
// snippet.hide
import Foundation
// snippet.show
import CofferCrypto

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
guard FileManager.default.changeCurrentDirectoryPath(folder) else { exit(2) }
try Data("release".utf8).write(to: URL(fileURLWithPath: "release.tar.gz"))
let body = Array("payload".utf8)
// snippet.show
let digest = try DigestAlgorithm.sha256.hash(fileAtPath: "release.tar.gz")   // streamed, constant memory
print(digest.hex)

let key = try MACKey.generate()                                               // 32 bytes from the system CSPRNG
let tag = try MACAlgorithm.hmacSHA256.authenticationCode(for: body, using: key)
let ok = try MACAlgorithm.hmacSHA256.isValidAuthenticationCode(tag.bytes, for: body, using: key)  // constant time
// snippet.hide
guard ok else { exit(1) }
