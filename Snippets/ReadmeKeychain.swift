// README: the keychain and a sign-in flow.
// snippet.hide
import Foundation
// snippet.show
import CofferCrypto
import CofferKeychain

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-snippet-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
guard FileManager.default.changeCurrentDirectoryPath(folder) else { exit(2) }
setenv("XDG_DATA_HOME", folder, 1)
let keychainPassword = "keychain password", backupPassword = Array("backup password".utf8)
let token = "t0ken", password = "correct horse battery staple"
// snippet.show
let keychain = try Keychain.open(create: true)            // Keychain.defaultPath(): coffer/keychain.db in the data folder, 0600
if try !keychain.isCreated { try keychain.create(password: keychainPassword) }
try keychain.unlock(password: keychainPassword)
try keychain.add(.genericPassword(service: "com.example.app", account: "ada@example.com"), secret: Array(token.utf8))
let secret = try keychain.secret(matching: .genericPassword(service: "com.example.app", account: "ada@example.com"))
try keychain.add(try SigningKey.generate(.p256), tag: "com.example.app.request-signing")
let signingKey = try keychain.signingKey(tag: "com.example.app.request-signing")
try keychain.exportItems(toPath: "backup.coffer", keychainPassword: keychainPassword, protection: .password(backupPassword))

let session = SignInSession(service: "com.example.app", keychain: keychain)
let states = session.states()                                      // .signedIn(user:), .signedOut
try session.signIn(user: "ada@example.com", password: password)   // stores a scrypt hash, never the password
// snippet.hide
guard secret == Array(token.utf8), try session.verify(password: password) else { exit(1) }
print(signingKey.algorithm)
for await state in states { print(state); break }
