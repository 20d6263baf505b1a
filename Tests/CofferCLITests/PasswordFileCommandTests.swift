import CofferTestSupport
import CofferTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 42, item 6: `--password-file` read silently a file every user could read.
@Suite("coffer: password files")
struct PasswordFileCommandTests {
    /// Issue 42, item 6: a password file that group or others can read is used, and reported on
    /// standard error with the command that fixes it; a private one is read silently.
    @Test func aPasswordFileOthersCanReadIsReported() async throws {
        let folder = try TemporaryDirectory()
        try folder.writeSecret("correct horse\n", to: "pw")
        try folder.write(Array("x".utf8), to: "plain")
        let quiet = try await coffer("encrypt", "--password-file", "pw", "--scrypt-log-n", "10", "plain", "-o", "x.coffer", in: folder)
        #expect(quiet.status == 0 && !quiet.standardError.contains("warning"), "\(quiet.standardError)")
        for mode: mode_t in [0o644, 0o640, 0o604] {
            chmod(folder.path("pw"), mode)
            let loud = try await coffer("decrypt", "--password-file", "pw", "x.coffer", "-o", "-", in: folder)
            #expect(loud.status == 0 && loud.output == "x", "\(loud.standardError)")
            #expect(loud.standardError.contains("coffer: warning: password file 'pw' is accessible by other users (mode \(String(mode, radix: 8)))"), "\(loud.standardError)")
            #expect(loud.standardError.contains("chmod 600 pw"), "\(loud.standardError)")
        }
    }
}
