import CofferCore
import CofferCrypto
import CofferFormats
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Keys and signatures exchanged with the `openssl` command, both ways, for every algorithm OpenSSL
/// supports here (OpenSSL 3.0 has no ML-DSA).
@Suite("Keys and signatures with openssl", .enabled(if: CommandRunner.isAvailable("openssl")))
struct OpenSSLKeyInteropTests {
    /// `openssl genpkey` options per algorithm.
    static let algorithms: [(String, [String])] = [
        ("rsa2048", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]),
        ("p256", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]),
        ("p384", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]),
        ("p521", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"]),
        ("ed25519", ["-algorithm", "ED25519"]),
    ]

    static func openssl(_ arguments: [String], in folder: TemporaryDirectory, input: [UInt8] = []) async throws -> CommandResult {
        let result = try await CommandRunner.run("openssl", arguments, input: input, currentDirectory: folder.path)
        try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.standardError)")
        return result
    }

    /// The fingerprint OpenSSL computes: SHA-256 of the DER SubjectPublicKeyInfo.
    static func openSSLFingerprint(_ key: String, in folder: TemporaryDirectory, extra: [String] = []) async throws -> String {
        let spki = try await openssl(["pkey", "-in", key, "-pubout", "-outform", "DER"] + extra, in: folder)
        return DigestAlgorithm.sha256.hash(spki.standardOutput).hex
    }

    @Test(arguments: algorithms.map(\.0))
    func opensslKeysImportInEveryFormatWithTheSameFingerprint(name: String) async throws {
        let folder = try TemporaryDirectory()
        let options = try #require(Self.algorithms.first { $0.0 == name }?.1)
        _ = try await Self.openssl(["genpkey"] + options + ["-out", "key.pem"], in: folder)
        let expected = try await Self.openSSLFingerprint("key.pem", in: folder)
        try folder.write("pass phrase\n", to: "pass.txt")

        var files: [(String, KeyFormat, KeyEncoding)] = [("key.pem", .pkcs8, .pem)]
        _ = try await Self.openssl(["pkey", "-in", "key.pem", "-outform", "DER", "-out", "key.der"], in: folder)
        files.append(("key.der", name.hasPrefix("p") ? .sec1 : (name == "rsa2048" ? .pkcs1Private : .pkcs8), .der))
        _ = try await Self.openssl(["pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem"], in: folder)
        files.append(("pub.pem", .spki, .pem))
        _ = try await Self.openssl(["pkey", "-in", "key.pem", "-pubout", "-outform", "DER", "-out", "pub.der"], in: folder)
        files.append(("pub.der", .spki, .der))
        _ = try await Self.openssl(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", "key.pem", "-out", "enc.pem", "-passout", "file:pass.txt"], in: folder)
        files.append(("enc.pem", .encryptedPKCS8, .pem))
        _ = try await Self.openssl(["pkcs8", "-topk8", "-scrypt", "-in", "key.pem", "-outform", "DER", "-out", "enc-scrypt.der", "-passout", "file:pass.txt"], in: folder)
        files.append(("enc-scrypt.der", .encryptedPKCS8, .der))
        if name == "rsa2048" {
            _ = try await Self.openssl(["pkey", "-in", "key.pem", "-traditional", "-out", "pkcs1.pem"], in: folder)
            files.append(("pkcs1.pem", .pkcs1Private, .pem))
            _ = try await Self.openssl(["rsa", "-in", "key.pem", "-RSAPublicKey_out", "-out", "pkcs1-pub.pem"], in: folder)
            files.append(("pkcs1-pub.pem", .pkcs1Public, .pem))
        }
        if name.hasPrefix("p") {
            _ = try await Self.openssl(["ec", "-in", "key.pem", "-out", "sec1.pem"], in: folder)
            files.append(("sec1.pem", .sec1, .pem))
        }
        for (file, format, encoding) in files {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path(file))))
            let imported = try ImportedKey(importing: bytes, password: { Array("pass phrase".utf8) })
            #expect(imported.format == format, "\(name) \(file)")
            #expect(imported.encoding == encoding, "\(name) \(file)")
            #expect(imported.verifyingKey.fingerprint.hex == expected, "\(name) \(file)")
        }
    }

    @Test(arguments: ["rsa2048", "p256", "p384", "p521", "ed25519"])
    func ourKeysLoadInOpenSSL(name: String) async throws {
        let folder = try TemporaryDirectory()
        let type = try #require(KeyAlgorithm(name: name))
        let key = try SigningKey.generate(type)
        let expected = key.verifyingKey.fingerprint.hex
        try folder.write("pass phrase\n", to: "pass.txt")
        var written: [(String, [String])] = [
            ("pkcs8.pem", []), ("pkcs8.der", ["-inform", "DER"]), ("enc.pem", ["-passin", "file:pass.txt"]),
            ("enc-scrypt.pem", ["-passin", "file:pass.txt"]),
        ]
        try folder.write(key.representation(), to: "pkcs8.pem")
        try folder.write(key.representation(encoding: .der), to: "pkcs8.der")
        try folder.write(key.encryptedPKCS8Representation(password: Array("pass phrase".utf8)), to: "enc.pem")
        try folder.write(key.encryptedPKCS8Representation(password: Array("pass phrase".utf8), kdf: .openSSLCompatibleScrypt), to: "enc-scrypt.pem")
        if type == .rsa2048 {
            try folder.write(key.representation(as: .pkcs1Private), to: "pkcs1.pem")
            written.append(("pkcs1.pem", []))
        }
        if name.hasPrefix("p") {
            try folder.write(key.representation(as: .sec1), to: "sec1.pem")
            written.append(("sec1.pem", []))
        }
        for (file, extra) in written {
            await #expect(try Self.openSSLFingerprint(file, in: folder, extra: extra) == expected, "\(name) \(file)")
        }
        try folder.write(key.verifyingKey.representation(), to: "pub.pem")
        let publicDER = try await Self.openssl(["pkey", "-pubin", "-in", "pub.pem", "-outform", "DER"], in: folder)
        #expect(DigestAlgorithm.sha256.hash(publicDER.standardOutput).hex == expected)
    }

    @Test(arguments: ["rsa2048", "p256", "p384", "p521"])
    func digestSignaturesCrossVerify(name: String) async throws {
        let folder = try TemporaryDirectory()
        let type = try #require(KeyAlgorithm(name: name))
        let key = try SigningKey.generate(type)
        try folder.write(key.representation(), to: "key.pem")
        try folder.write(key.verifyingKey.representation(), to: "pub.pem")
        let path = try folder.write(Fixtures.randomBytes(count: 3 * FileReader.defaultChunkSize + 11), to: "data.bin")

        // Ours, verified by OpenSSL.
        try folder.write(key.signature(forDigestOfFileAtPath: path), to: "ours.sig")
        _ = try await Self.openssl(["dgst", "-sha512", "-verify", "pub.pem", "-signature", "ours.sig", "data.bin"], in: folder)
        // OpenSSL's, verified by us.
        let theirs = try await Self.openssl(["dgst", "-sha512", "-sign", "key.pem", "data.bin"], in: folder).standardOutput
        #expect(try key.verifyingKey.isValidSignature(theirs, forDigestOfFileAtPath: path))
        if type == .rsa2048 {
            #expect(try key.signature(forDigestOfFileAtPath: path) == theirs, "RSA PKCS#1 v1.5 is deterministic: identical bytes")
            // PSS both ways.
            try folder.write(key.signature(forDigestOfFileAtPath: path, options: SignatureOptions(hash: .sha512, rsaPadding: .pss)), to: "pss.sig")
            _ = try await Self.openssl(
                ["dgst", "-sha512", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest", "-verify", "pub.pem", "-signature", "pss.sig", "data.bin"],
                in: folder
            )
            let theirPSS = try await Self.openssl(
                ["dgst", "-sha512", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest", "-sign", "key.pem", "data.bin"],
                in: folder
            ).standardOutput
            #expect(try key.verifyingKey.isValidSignature(theirPSS, forDigestOfFileAtPath: path, options: SignatureOptions(hash: .sha512, rsaPadding: .pss)))
        }
    }

    @Test func ed25519SignaturesMatchPkeyutlRawin() async throws {
        let folder = try TemporaryDirectory()
        _ = try await Self.openssl(["genpkey", "-algorithm", "ED25519", "-out", "key.pem"], in: folder)
        let key = try SigningKey(importing: Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("key.pem")))))
        let message = Fixtures.randomBytes(count: 10_000)
        try folder.write(message, to: "data.bin")
        let theirs = try await Self.openssl(["pkeyutl", "-sign", "-rawin", "-inkey", "key.pem", "-in", "data.bin"], in: folder).standardOutput
        #expect(try key.signature(for: message) == theirs)
        try folder.write(key.verifyingKey.representation(), to: "pub.pem")
        try folder.write(try key.signature(for: message), to: "ours.sig")
        _ = try await Self.openssl(["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "pub.pem", "-in", "data.bin", "-sigfile", "ours.sig"], in: folder)
    }

    @Test func ecdsaDERAndRawConvert() throws {
        let key = try SigningKey.generate(.p521)
        let message = Array("convert me".utf8)
        let der = try key.signature(for: message)
        let raw = try ECDSASignatureConversion.raw(fromDER: der, algorithm: .p521)
        #expect(raw.count == 132)
        #expect(key.verifyingKey.isValidSignature(raw, for: message, options: SignatureOptions(ecdsaEncoding: .raw)))
        #expect(try ECDSASignatureConversion.der(fromRaw: raw, algorithm: .p521) == der)
        #expect(throws: CofferCryptoError.self) { try ECDSASignatureConversion.raw(fromDER: Array(der.dropLast()), algorithm: .p521) }
        #expect(throws: CofferCryptoError.self) { try ECDSASignatureConversion.der(fromRaw: Array(raw.dropLast()), algorithm: .p521) }
    }
}

@Suite("Legacy RSA", .enabled(if: CommandRunner.isAvailable("openssl")))
struct LegacyRSATests {
    @Test func rsa1024VerifiesOnlyBehindTheUnsafeOptionAndNeverSigns() async throws {
        let folder = try TemporaryDirectory()
        let run = { (arguments: [String]) async throws -> CommandResult in
            let result = try await CommandRunner.run("openssl", arguments, currentDirectory: folder.path)
            try #require(result.status == 0, "\(result.standardError)")
            return result
        }
        _ = try await run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "old.pem"])
        _ = try await run(["pkey", "-in", "old.pem", "-pubout", "-out", "old.pub"])
        try folder.write("old message", to: "message")
        _ = try await run(["dgst", "-sha256", "-sign", "old.pem", "-out", "message.sig", "message"])
        let publicPEM = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("old.pub"))))
        let privatePEM = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("old.pem"))))
        let signature = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path("message.sig"))))

        let refused = try #require(throws: CofferFormatsError.self) { try VerifyingKey(importing: publicPEM) }
        #expect(refused.reason.contains("at least 2048 bits, found 1024 bits"))
        let legacy = try VerifyingKey(importing: publicPEM, allowingLegacyRSA: true)
        #expect(legacy.algorithm == .rsa(bits: 1024))
        #expect(legacy.isValidSignature(signature, for: Array("old message".utf8), options: SignatureOptions(hash: .sha256)))
        #expect(throws: CofferFormatsError.self) { try SigningKey(importing: privatePEM) }
    }
}
