// App data that must not end up in backups or be readable by other users: a folder at 0700, files
// written whole at 0600, and the backup exclusion set (an extended attribute on Linux, the
// isExcludedFromBackup resource value on Apple platforms).
// snippet.hide
import Foundation
// snippet.show
import CofferFiles

// snippet.hide
let data = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
defer { try? FileManager.default.removeItem(atPath: data) }
setenv("XDG_DATA_HOME", data, 1)
// snippet.show
let folder = try ProtectedFolder.applicationData(named: "com.example.app")   // in the user's data folder (DataLocation)
try folder.write(Array("session token".utf8), to: "session")

let status = ProtectionStatus.of(folder.path)
print("protected:", status.isProtected, status.problems)
print("backup exclusion:", folder.backupExclusion)
