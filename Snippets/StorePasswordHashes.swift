// Signing in without keeping the password: a salted, slow hash (scrypt) goes into the keychain, sign-in
// compares against it, and the app follows the signed-in state as a stream.
import CofferKeychain
import CofferTesting

// snippet.hide
let temporary = try TemporaryKeychain()
let keychain = temporary.keychain
// snippet.show
let session = SignInSession(service: "com.example.app", keychain: keychain)
let states = session.states()

try session.signIn(user: "ada@example.com", password: "hunter2 is not a password")   // stores a hash only
print("right password:", try session.verify(password: "hunter2 is not a password"))
print("wrong password:", try session.verify(password: "hunter3"))
try session.signOut()

var wasSignedIn = false
for await state in states {                      // the current state first, then every change
    print("state:", state)
    if case .signedIn = state { wasSignedIn = true }
    if state == .signedOut && wasSignedIn { break }
}
