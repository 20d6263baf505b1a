// A password item in the keychain, and one that also needs an application password: the keychain password
// alone does not open it.
import CofferKeychain
import CofferTesting

// snippet.hide
let temporary = try TemporaryKeychain()
let keychain = temporary.keychain
// snippet.show
let token = KeychainPasswordItem(service: "com.example.api", account: "ada@example.com", keychain: keychain)
try token.save("t0ken")
print("token:", try token.readPassword())

// A second secret, sealed under an application password as well.
let item = KeychainItem.genericPassword(service: "com.example.vault", account: "ada@example.com")
try keychain.add(item, secret: Array("vault key".utf8), accessControl: AccessControl(applicationPassword: "app pass"))

var query = KeychainQuery.genericPassword(service: "com.example.vault", account: "ada@example.com")
do {
    _ = try keychain.secret(matching: query)
} catch {
    print("without the application password:", error.code)
}
query.applicationPassword = "app pass"
print("with it:", String(decoding: try keychain.secret(matching: query), as: UTF8.self))
