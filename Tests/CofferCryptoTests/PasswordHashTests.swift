import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// RFC 7914 §11–12 through our PHC parsing and verification: each vector becomes a stored hash string,
/// which must accept its password and refuse any other.
@Suite("Password hash vectors (RFC 7914)")
struct PasswordHashVectorTests {
    struct File: Decodable {
        struct PBKDF2: Decodable { let password: String, salt: String, c: Int, dk: String }
        struct Scrypt: Decodable { let password: String, salt: String, N: Int, r: Int, p: Int, dk: String }
        let pbkdf2_hmac_sha256: [PBKDF2]
        let scrypt: [Scrypt]
    }

    static let file = try? TestVectors.load(File.self, from: "rfc/rfc7914_scrypt_pbkdf2.json")
    // The vectors' costs (c=1, N=16) are far below the policy's floor of verification, and the slow one
    // (N=2^20) above the default limits: this policy opts in to verifying them all, to check the primitive.
    static let hasher = PasswordHasher(policy: PasswordHashPolicy(
        kdf: .scrypt(logN: 17, r: 8, p: 1), minimumVerifiableScryptLogN: 1, minimumVerifiablePBKDF2Iterations: 1,
        limits: PasswordKDFLimits(scryptUpToLogN: 20)
    ))

    static func phc(_ identifier: String, _ parameters: String, salt: String, dk: String) throws -> String {
        "$\(identifier)$\(parameters)$\(unpaddedBase64(Array(salt.utf8)))$\(unpaddedBase64(try Hex.decode(dk)))"
    }

    @Test func pbkdf2() throws {
        let vectors = try #require(Self.file).pbkdf2_hmac_sha256
        #expect(vectors.count == 2)
        for vector in vectors {
            let hash = try PasswordHash(phcString: Self.phc("pbkdf2-sha256", "i=\(vector.c)", salt: vector.salt, dk: vector.dk))
            #expect(hash.kdf == .pbkdf2(iterations: vector.c))
            #expect(try Self.hasher.verify(password: vector.password, against: hash))
            #expect(try !Self.hasher.verify(password: vector.password + "x", against: hash))
            #expect(Self.hasher.needsRehash(hash), "below 600,000 iterations")
        }
    }

    @Test func scrypt() throws {
        let vectors = try #require(Self.file).scrypt
        #expect(vectors.count == 4)
        // The N=2^20 case needs 1 GiB and about 30 s in a debug build (swift-crypto's C is built -O0
        // there); it runs when COFFER_SLOW_TESTS is set. The other three cover the same code path.
        let slow = ProcessInfo.processInfo.environment["COFFER_SLOW_TESTS"] != nil
        for vector in vectors where slow || vector.N <= 1 << 14 {
            let logN = vector.N.trailingZeroBitCount
            let hash = try PasswordHash(phcString: Self.phc("scrypt", "ln=\(logN),r=\(vector.r),p=\(vector.p)", salt: vector.salt, dk: vector.dk))
            #expect(try Self.hasher.verify(password: vector.password, against: hash))
            #expect(try !Self.hasher.verify(password: "not " + vector.password, against: hash))
        }
    }
}

@Suite("Password hashing")
struct PasswordHasherTests {
    // A cheap policy for round trips; the standard one is exercised once below.
    static let fast = PasswordHasher(policy: PasswordHashPolicy(kdf: .scrypt(logN: 10, r: 8, p: 1), minimumScryptLogN: 10, minimumVerifiableScryptLogN: 10))

    @Test func standardPolicyMakesScrypt17AndVerifies() throws {
        let hasher = PasswordHasher()
        let hash = try hasher.hash(password: "correct horse battery staple")
        #expect(hash.phcString.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(hash.salt.count == 16)
        let parsed = try PasswordHash(phcString: hash.phcString)
        #expect(parsed == hash)
        #expect(try hasher.verify(password: "correct horse battery staple", against: parsed))
        #expect(try !hasher.verify(password: "correct horse battery stapl", against: parsed))
        #expect(!hasher.needsRehash(parsed))
        #expect(!hash.description.contains(String(hash.phcString.split(separator: "$").last ?? "")), "the description never shows the hash")
    }

    /// `description` hides the hash, so it is no PHC string; handing it to the parser (the natural slip,
    /// `PasswordHash(phcString: hash.description)`) fails with a reason that says what happened and
    /// names `phcString`, not with "found 0 fields". The same for a `StoredPassword`'s description.
    @Test func theDescriptionSaysItIsRedactedAndIsNeverParsedAsAHash() throws {
        let hash = try Self.fast.hash(password: "pw")
        let salt = String(hash.phcString.split(separator: "$")[2]), digest = String(hash.phcString.split(separator: "$")[3])
        for shown in [hash.description, "\(hash)", String(reflecting: hash), "\([hash])", StoredPassword.hash(hash).description] {
            #expect(shown.contains("redacted") && shown.contains("phcString"), "\(shown)")
            #expect(!shown.contains("$") && !shown.contains(digest) && !shown.contains(salt), "\(shown)")
        }
        var dumped = ""
        dump(hash, to: &dumped)
        #expect(!dumped.contains("salt: \(hash.salt.count) elements") && !dumped.contains("hash: 32 elements") && dumped.contains("redacted"), "dump shows neither salt nor hash:\n\(dumped)")
        for text in [hash.description, "\(hash)", " \(hash.description)\n"] {
            let error = try #require(throws: CofferCryptoError.invalidArgument, "\(text) parsed as a password hash") { _ = try PasswordHash(phcString: text) }
            #expect(error.reason.contains("this is PasswordHash.description, which hides the hash; use phcString"), "\(error.reason)")
            do {
                _ = try StoredPassword(storedString: text, email: "ada@example.com")
                Issue.record("\(text) parsed as a stored password")
            } catch {
                #expect(error.reason.contains("this is PasswordHash.description, which hides the hash; use phcString"), "\(error.reason)")
            }
        }
        let legacy = StoredPassword.insecureLegacySHA256(hexDigest: String(repeating: "ab", count: 32), email: "ada@example.com", salt: "s4lt")
        #expect(throws: CofferCryptoError.self) { try StoredPassword(storedString: legacy.description, email: "ada@example.com") }
        do {
            _ = try StoredPassword(storedString: legacy.description, email: "ada@example.com")
        } catch {
            #expect(error.reason.contains("this is StoredPassword.description, which hides the record; use storedString"), "\(error.reason)")
        }
        // The one spelling that round-trips.
        #expect(try PasswordHash(phcString: hash.phcString) == hash)
        #expect(try StoredPassword(storedString: StoredPassword.hash(hash).storedString, email: "ada@example.com") == .hash(hash))
    }

    @Test func saltsAreFreshEveryTime() throws {
        let one = try Self.fast.hash(password: "pw"), two = try Self.fast.hash(password: "pw")
        #expect(one.phcString != two.phcString)
    }

    @Test func pbkdf2PolicyAndRehash() throws {
        let pbkdf2 = PasswordHasher(policy: PasswordHashPolicy(kdf: .pbkdf2(iterations: 600_000)))
        let hash = try pbkdf2.hash(password: "pw")
        #expect(hash.phcString.hasPrefix("$pbkdf2-sha256$i=600000$"))
        #expect(try pbkdf2.verify(password: "pw", against: hash))
        #expect(!pbkdf2.needsRehash(hash))
        #expect(PasswordHasher().needsRehash(hash), "the standard policy prefers scrypt")
        let weak = try PasswordHash(phcString: "$pbkdf2-sha256$i=10000$c2FsdHNhbHRzYWx0c2FsdA$" + String(repeating: "A", count: 43))
        #expect(pbkdf2.needsRehash(weak))
    }

    @Test func policyBelowItsOwnMinimumIsRefused() {
        let hasher = PasswordHasher(policy: PasswordHashPolicy(kdf: .pbkdf2(iterations: 1000)))
        #expect(throws: CofferCryptoError.self) { try hasher.hash(password: "pw") }
    }

    @Test func costAboveTheCapIsRefusedWithoutComputing() throws {
        let hostile = try PasswordHash(phcString: "$scrypt$ln=30,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$" + String(repeating: "A", count: 43))
        let error = try #require(throws: CofferCryptoError.costTooHigh) { try PasswordHasher().verify(password: "pw", against: hostile) }
        #expect(error.reason.contains("above the limit of N=2^"), "\(error.reason)")
        let iterations = try PasswordHash(phcString: "$pbkdf2-sha256$i=999999999$c2FsdA$" + String(repeating: "A", count: 43))
        #expect(throws: CofferCryptoError.self) { try PasswordHasher().verify(password: "pw", against: iterations) }
    }

    @Test(arguments: [
        "", "$", "scrypt$ln=10,r=8,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA", "$scrypt$ln=10,r=8$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1,x=2$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA", "$scrypt$r=8,ln=10,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=-1,r=8,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA", "$scrypt$ln=99,r=8,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$c2Fs!A$AAAAAAAAAAAAAAAAAAAAAA", "$scrypt$ln=10,r=8,p=1$c2FsdA$AAAA",
        "$scrypt$ln=10,r=8,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA$extra", "$bcrypt$12$abc$def",
        "$pbkdf2-sha256$i=0$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA", "$pbkdf2-sha256$i=1e6$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA",
        "$pbkdf2-sha256$i=99999999999999999999$c2FsdA$AAAAAAAAAAAAAAAAAAAAAA",
    ])
    func malformedStringsAreRefused(_ text: String) {
        #expect(throws: CofferCryptoError.self) { try PasswordHash(phcString: text) }
    }

    @Test func oversizedStringIsRefused() {
        #expect(throws: CofferCryptoError.self) { try PasswordHash(phcString: "$scrypt$" + String(repeating: "A", count: 10_000)) }
    }

    @Test func passlibPBKDF2FormIsAccepted() throws {
        // passlib.hash.pbkdf2_sha256.hash("password", rounds=1000, salt=b"saltsaltsaltsalt"): bare rounds and
        // adapted base64 ('.' for '+'). Its value is recomputed here from the RFC-tested primitive.
        let derived = try PasswordKDF.pbkdf2(iterations: 1000).derive(password: Array("password".utf8), salt: Array("saltsaltsaltsalt".utf8)).withUnsafeBytes { Array($0) }
        let ab64 = { (bytes: [UInt8]) in unpaddedBase64(bytes).replacingOccurrences(of: "+", with: ".") }
        let text = "$pbkdf2-sha256$1000$\(ab64(Array("saltsaltsaltsalt".utf8)))$\(ab64(derived))"
        let hash = try PasswordHash(phcString: text)
        #expect(hash.phcString.hasPrefix("$pbkdf2-sha256$i=1000$"), "re-stored in the PHC form")
        // 1,000 rounds are below the floor: only the migration path verifies it, and replaces it.
        #expect(throws: CofferCryptoError.self) { try PasswordHasher().verify(password: "password", against: hash) }
        let migrated = try PasswordHasher().verifyInsecureLegacy(password: "password", against: .hash(hash))
        #expect(migrated.matches && migrated.replacement?.kdf == PasswordHashPolicy.standard.kdf)
    }
}

@Suite("Legacy password migration")
struct LegacyPasswordTests {
    static let email = "ada@example.com", salt = "s4lt"

    static func legacyDigest(_ password: String) -> String {
        DigestAlgorithm.sha256.hash(Array("\(password).\(email).\(salt)".utf8)).hex
    }

    @Test func legacyMatchUpgradesToScrypt() throws {
        let stored = StoredPassword.insecureLegacySHA256(hexDigest: Self.legacyDigest("hunter2"), email: Self.email, salt: Self.salt)
        let hasher = PasswordHasherTests.fast
        #expect(throws: CofferCryptoError.self, "a legacy record verifies only through the named legacy path") {
            try hasher.verify(password: "hunter2", against: stored)
        }
        let result = try hasher.verifyInsecureLegacy(password: "hunter2", against: stored)
        #expect(result.matches)
        let replacement = try #require(result.replacement)
        #expect(replacement.phcString.hasPrefix("$scrypt$"))
        let upgraded = try hasher.verify(password: "hunter2", against: StoredPassword.hash(replacement))
        #expect(upgraded.matches && upgraded.replacement == nil, "the upgraded hash verifies and needs nothing more")
    }

    @Test func legacyMismatchGivesNothing() throws {
        let stored = StoredPassword.insecureLegacySHA256(hexDigest: Self.legacyDigest("hunter2"), email: Self.email, salt: Self.salt)
        let result = try PasswordHasherTests.fast.verifyInsecureLegacy(password: "hunter3", against: stored)
        #expect(!result.matches && result.replacement == nil)
        let otherEmail = StoredPassword.insecureLegacySHA256(hexDigest: Self.legacyDigest("hunter2"), email: "eve@example.com", salt: Self.salt)
        #expect(try !PasswordHasherTests.fast.verifyInsecureLegacy(password: "hunter2", against: otherEmail).matches)
        let garbage = StoredPassword.insecureLegacySHA256(hexDigest: "zz", email: Self.email, salt: Self.salt)
        #expect(try !PasswordHasherTests.fast.verifyInsecureLegacy(password: "hunter2", against: garbage).matches)
    }

    @Test func legacyRecordRoundTripsThroughItsStoredString() throws {
        let stored = StoredPassword.insecureLegacySHA256(hexDigest: Self.legacyDigest("pw"), email: Self.email, salt: Self.salt)
        #expect(try StoredPassword(storedString: stored.storedString, email: Self.email) == stored)
        #expect(throws: CofferCryptoError.self) { try StoredPassword(storedString: "$sha256-legacy$salt=@@$00", email: Self.email) }
    }

    @Test func weakPHCHashIsUpgradedToo() throws {
        let weak = try PasswordHasher(policy: PasswordHashPolicy(kdf: .scrypt(logN: 10, r: 8, p: 1), minimumScryptLogN: 10)).hash(password: "pw")
        let result = try PasswordHasherTests.fast.verify(password: "pw", against: StoredPassword.hash(weak))
        #expect(result.matches && result.replacement == nil, "the fast policy's own level is fine")
        let strict = PasswordHasher(policy: PasswordHashPolicy(kdf: .scrypt(logN: 12, r: 8, p: 1), minimumScryptLogN: 12, minimumVerifiableScryptLogN: 10))
        let upgraded = try strict.verify(password: "pw", against: StoredPassword.hash(weak))
        #expect(upgraded.matches && upgraded.replacement?.kdf == .scrypt(logN: 12, r: 8, p: 1))
    }
}

/// PHC's base64: the standard alphabet without padding.
func unpaddedBase64(_ bytes: [UInt8]) -> String { Base64.encode(bytes).replacingOccurrences(of: "=", with: "") }

/// The floor of verification (issue 20): before it, `verify` accepted `$pbkdf2-sha256$i=1$…` and reported
/// success, so a store holding such hashes (or an attacker who could plant one) looked protected.
@Suite("Password hash floors")
struct PasswordHashFloorTests {
    static func pbkdf2(_ password: String, iterations: Int) throws -> PasswordHash {
        let salt = Array("saltsaltsaltsalt".utf8)
        let derived = try PasswordKDF.pbkdf2(iterations: iterations).derive(password: Array(password.utf8), salt: salt).withUnsafeBytes { Array($0) }
        return try PasswordHash(phcString: "$pbkdf2-sha256$i=\(iterations)$\(unpaddedBase64(salt))$\(unpaddedBase64(derived))")
    }

    @Test(arguments: [1, 1000, 99_999])
    func aPBKDF2HashBelowTheFloorIsRefusedEvenWithTheRightPassword(iterations: Int) throws {
        let hash = try Self.pbkdf2("pw", iterations: iterations)
        let error = try #require(throws: CofferCryptoError.weakParameters) { try PasswordHasher().verify(password: "pw", against: hash) }
        #expect(error.reason.contains("below the 100000 this policy verifies"), "\(error.reason)")
        #expect(throws: CofferCryptoError.self) { try PasswordHasher().verify(password: "pw", against: StoredPassword.hash(hash)) }
        let migrated = try PasswordHasher().verifyInsecureLegacy(password: "pw", against: .hash(hash))
        #expect(migrated.matches && migrated.replacement != nil, "the legacy path verifies it and hands back a replacement")
    }

    @Test func scryptBelowTheFloorIsRefusedAndTheFloorItselfIsAccepted() throws {
        let weak = try PasswordHasher(policy: PasswordHashPolicy(kdf: .scrypt(logN: 13, r: 8, p: 1), minimumScryptLogN: 13)).hash(password: "pw")
        let error = try #require(throws: CofferCryptoError.weakParameters) { try PasswordHasher().verify(password: "pw", against: weak) }
        #expect(error.reason.contains("scrypt N=2^13, below the 2^14"), "\(error.reason)")
        let atFloor = try PasswordHasher(policy: PasswordHashPolicy(kdf: .scrypt(logN: 14, r: 8, p: 1), minimumScryptLogN: 14)).hash(password: "pw")
        #expect(try PasswordHasher().verify(password: "pw", against: atFloor))
        #expect(try PasswordHasher().verify(password: "pw", against: Self.pbkdf2("pw", iterations: 100_000)))
    }
}
