// Publishing a checksum beside a download, and checking one: SHA-256, streamed in constant memory,
// in the line format `sha256sum` writes, compared in constant time.
import CofferCore
import CofferCrypto
import CofferFormats
import Foundation

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let release = folder + "/app-1.2.tar.gz"
try Data("release contents".utf8).write(to: URL(fileURLWithPath: release))
// snippet.show

// The publisher: one line per file, as `sha256sum app-1.2.tar.gz` prints it.
let digest = try DigestAlgorithm.sha256.hash(fileAtPath: release)
let line = ChecksumList.line(for: digest, path: release)
try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/SHA256SUMS"))

// The downloader: every listed file must match, and at least one must be listed.
let summary = try ChecksumVerifier(algorithm: .sha256).verifyFiles(listedIn: folder + "/SHA256SUMS") { event in
    if case .finished(let entry, .mismatched) = event { print("\(entry.path): FAILED") }
}
guard summary.passed else { print("do not install: the download is not the published one"); exit(1) }
print("checksum OK:", digest.hex)
