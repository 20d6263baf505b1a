// Encrypting files, not bytes in memory: streamed in 64 KiB segments in constant memory, to recipients'
// public keys (or a password, or a 256-bit key), with an output that appears whole or not at all.
// snippet.hide
import Foundation
// snippet.show
import CofferFormats

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
guard FileManager.default.changeCurrentDirectoryPath(folder) else { exit(2) }
try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(fileURLWithPath: "backup.tar"))
// snippet.show
// Two recipients, each opening the file with their own private key.
let alice = RecipientPrivateKey.generateX25519()
let bob = RecipientPrivateKey.generateX25519()
try CofferEncryption.encryptFile(atPath: "backup.tar", toPath: "backup.tar.coffer", to: .recipients([alice.publicKey, bob.publicKey]))

// The plaintext file appears only once every segment authenticated; an existing file is replaced only
// with overwrite: true.
try CofferEncryption.decryptFile(atPath: "backup.tar.coffer", toPath: "restored.tar", with: .identity(bob))
// snippet.hide
var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "backup.tar.coffer")))
bytes[bytes.count - 100] ^= 1
try Data(bytes).write(to: URL(fileURLWithPath: "damaged.coffer"))
// snippet.show

// A copy with one byte changed near its end: refused, and nothing appears at the output path.
do {
    try CofferEncryption.decryptFile(atPath: "damaged.coffer", toPath: "damaged.tar", with: .identity(alice))
} catch {
    print("refused:", error)
}
// snippet.hide
guard try Data(contentsOf: URL(fileURLWithPath: "restored.tar")) == Data(contentsOf: URL(fileURLWithPath: "backup.tar")),
      !FileManager.default.fileExists(atPath: "damaged.tar") else { exit(1) }
