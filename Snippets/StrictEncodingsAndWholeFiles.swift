// Strict encodings, a constant-time comparison, a file read in chunks, and an output file that appears
// whole or not at all.
// snippet.hide
import Foundation
// snippet.show
import CofferCore

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
guard FileManager.default.changeCurrentDirectoryPath(folder) else { exit(2) }
try Data(repeating: 7, count: 3 << 20).write(to: URL(fileURLWithPath: "backup.tar"))
// snippet.show
let bytes = try Hex.decode("00ff10")                 // strict: no whitespace, no 0x, even length
let token = Base64.encodeURLSafe(bytes)               // "AP8Q"
let same = ConstantTime.equals(bytes, [0x00, 0xFF, 0x10])

let reader = try FileReader(path: "backup.tar")      // 1 MiB chunks, read ahead on large files
try reader.forEachChunk { chunk in /* hash, encrypt… */ }

let writer = try AtomicFileWriter(destination: "secret.key")   // 0600, no name until commit
try writer.write(bytes)
try writer.commit()          // fsync, named without replacing anything, folder fsync; nothing on failure
// snippet.hide
guard token == "AP8Q", same, try Data(contentsOf: URL(fileURLWithPath: "secret.key")) == Data(bytes) else { exit(1) }
print(token, same)
