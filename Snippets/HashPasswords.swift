// Storing passwords: a salted, slow hash in a PHC string, checked in constant time, and replaced on the
// next successful sign-in when it is cheaper than the policy (or made by another algorithm).
import CofferCrypto

let hasher = PasswordHasher()      // scrypt at N = 2^17, r = 8, p = 1; a fresh 16-byte salt every time

// Signing up: store the PHC string — never the password, and not hash.description, which hides the hash.
let stored = try hasher.hash(password: "correct horse battery staple").phcString   // "$scrypt$ln=17,r=8,p=1$…"

/// Signing in: the stored string read back and checked. Returns what to store from now on — the same
/// string, or a fresh hash when the stored one needs a rehash — or nil for a wrong password.
func signIn(password: String, stored: String) throws -> String? {
    let hasher = PasswordHasher()
    let hash = try PasswordHash(phcString: stored)
    guard try hasher.verify(password: password, against: hash) else { return nil }
    return hasher.needsRehash(hash) ? try hasher.hash(password: password).phcString : stored
}

print(try signIn(password: "correct horse battery staple", stored: stored) == stored)   // true: kept
print(try signIn(password: "correct horse battery stapler", stored: stored) == nil)     // true: refused

// A hash an earlier release stored with PBKDF2: it verifies, and comes back as scrypt.
let earlier = PasswordHasher(policy: PasswordHashPolicy(kdf: .pbkdf2(iterations: 600_000)))
let old = try earlier.hash(password: "correct horse battery staple").phcString          // "$pbkdf2-sha256$i=600000$…"
let upgraded = try signIn(password: "correct horse battery staple", stored: old)
print(upgraded?.hasPrefix("$scrypt$") == true)                                          // true: store it instead
// snippet.hide
guard upgraded?.hasPrefix("$scrypt$") == true, try signIn(password: "x", stored: old) == nil else { fatalError("the sample's claims do not hold") }
