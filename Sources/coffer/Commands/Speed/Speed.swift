import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures

struct Speed: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the throughput of Coffer's primitives on this machine, like 'openssl speed'.",
        discussion: """
            Each algorithm runs one-shot operations on blocks of --bytes (16384 by default) for --seconds \
            (3 by default), after a short warm-up, and reports operations and bytes per second. The \
            'k' column is in 1000s of bytes per second, the unit 'openssl speed -bytes 16384' prints, so \
            the two can be compared directly.

            Algorithms: sha256, sha384, sha512, sha512-256, sha3-256, sha3-384, sha3-512, hmac-sha256, \
            hmac-sha384, hmac-sha512 (all of these by default); insecure-sha1, insecure-md5 and \
            insecure-hmac-sha1 when named.

            Signatures (sign and verify operations per second, like 'openssl speed rsa2048 ecdsap256 \
            ed25519'): rsa2048, rsa4096, p256, p384, ed25519, mldsa65 by default; rsa3072, p521 and \
            mldsa87 when named. RSA and ECDSA sign a SHA-256 digest; Ed25519 and ML-DSA a 64-byte message.

            Encryption: aes-gcm and chacha (AES-256-GCM and ChaCha20-Poly1305 sealing --bytes blocks, \
            like 'openssl speed -evp aes-256-gcm'), pbkdf2 (PBKDF2-HMAC-SHA-256 iterations per second) and \
            scrypt (derivations per second at N=2^14, r=8, p=1).

            HTTP (when named): RFC 9421 sign + verify of a typical request (POST with a JSON body, \
            Content-Digest, @method @target-uri content-digest content-type, created and nonce; \
            verification with the default policy, without a replay cache) per second, for each algorithm; \
            'http-ALG' (http-hmac-sha256, http-ed25519, http-ecdsa-p256-sha256…) measures one.

            Keychain (when named): on a temporary keychain holding --keychain-items items (100,000 by \
            default), reads by service and account per second, durable adds per second (each its own \
            transaction, flushed to disk), the time to list every item, and unlock against scrypt alone.

            With -k, only that key's signatures are measured (a SHA-256 digest signed, as above): a key \
            file, or a key on a token ('pkcs11:' URI), to compare hardware with software.

            Examples:
              coffer speed sha256
              coffer speed --seconds 1 --json
              coffer speed -k 'pkcs11:token=release;object=signing' \\
                  --password-file pin.txt
            """
    )

    @Argument(help: "Algorithms to measure (default: all recommended).")
    var algorithms: [String] = []

    @Option(help: ArgumentHelp("Seconds to run each algorithm.", valueName: "s"))
    var seconds: Double = 3

    @Option(help: ArgumentHelp("Block size in bytes.", valueName: "n"))
    var bytes: Int = 16384

    @Option(name: .customLong("keychain-items"), help: ArgumentHelp("Items in the temporary keychain that 'keychain' measures.", valueName: "n"))
    var keychainItems = 100_000

    @Flag(help: "Print one JSON object per algorithm.")
    var json = false

    @Option(name: [.customShort("k"), .customLong("key")], help: ArgumentHelp("Measure signing with this key instead: a private key file, or a key on a token (pkcs11: URI).", valueName: "file|uri"))
    var key: String?

    @Option(name: .customLong("pkcs11-module"), help: ArgumentHelp("The token's PKCS #11 module, for a pkcs11: key (default: $COFFER_PKCS11_MODULE).", valueName: "path"))
    var pkcs11Module: String?

    @OptionGroup(title: "PIN or password (for -k)")
    var passwords: PasswordOptions

    func validate() throws {
        guard seconds > 0 && seconds <= 600 else { throw ValidationError("--seconds must be above 0 and at most 600, found \(seconds)") }
        guard (1...(64 << 20)).contains(bytes) else { throw ValidationError("--bytes must be from 1 to 67108864, found \(bytes)") }
        for name in algorithms where Self.primitive(named: name) == nil {
            throw ValidationError("unknown algorithm '\(name)'; expected one of: \(Self.allNames.joined(separator: ", "))")
        }
    }

    /// Something `speed` can measure: a digest or a MAC.
    enum Primitive {
        case digest(DigestAlgorithm)
        case mac(MACAlgorithm)
        case signature(KeyAlgorithm)
        case aead(AEADAlgorithm)
        case pbkdf2
        case scrypt
        case keychain
        case http(HTTPSignatureAlgorithm?)

        var name: String {
            switch self {
            case .digest(let algorithm): algorithm.rawValue
            case .mac(let algorithm): algorithm.rawValue
            case .signature(let type): type.name
            case .aead(let algorithm): algorithm == .aes256GCM ? "aes-gcm" : "chacha"
            case .pbkdf2: "pbkdf2"
            case .scrypt: "scrypt"
            case .keychain: "keychain"
            case .http(let algorithm): algorithm.map { "http-" + $0.rawValue } ?? "http"
            }
        }
    }

    static let recommended: [Primitive] = DigestAlgorithm.recommended.map { .digest($0) }
        + [.mac(.hmacSHA256), .mac(.hmacSHA384), .mac(.hmacSHA512)]
        + [.aead(.aes256GCM), .aead(.chaCha20Poly1305)]
        + [KeyAlgorithm.rsa2048, .rsa4096, .p256, .p384, .ed25519, .mldsa65].map { .signature($0) }
        + [.pbkdf2, .scrypt]
    static let allNames = DigestAlgorithm.allCases.map(\.rawValue) + MACAlgorithm.allCases.map(\.rawValue)
        + ["aes-gcm", "chacha"] + KeyAlgorithm.allCases.map(\.name) + ["pbkdf2", "scrypt", "keychain", "http"]
        + HTTPSignatureAlgorithm.allCases.map { "http-" + $0.rawValue }

    static func primitive(named name: String) -> Primitive? {
        if let digest = DigestAlgorithm(name: name) { return .digest(digest) }
        if let mac = MACAlgorithm(rawValue: name.lowercased()) { return .mac(mac) }
        if let type = KeyAlgorithm(name: name.lowercased()) { return .signature(type) }
        switch name.lowercased() {
        case "aes-gcm", "aes-256-gcm": return .aead(.aes256GCM)
        case "chacha", "chacha20-poly1305": return .aead(.chaCha20Poly1305)
        case "pbkdf2": return .pbkdf2
        case "scrypt": return .scrypt
        case "keychain": return .keychain
        case "http": return .http(nil)
        default:
            guard name.lowercased().hasPrefix("http-"),
                  let algorithm = HTTPSignatureAlgorithm(rawValue: String(name.lowercased().dropFirst(5))) else { return nil }
            return .http(algorithm)
        }
    }

    func run() throws {
        if let key {
            // One key, given: its signatures per second (a token's, beside a software key's).
            let signer = try KeyFiles.signer(key, passwords: passwords, pkcs11Module: pkcs11Module)
            let type = signer.algorithm.description.lowercased().replacingOccurrences(of: "-", with: "")
            return try measureSigner(signer, name: HardwareKeys.isURI(key) ? "token-" + type : type)
        }
        let chosen = algorithms.isEmpty ? Self.recommended : algorithms.compactMap(Self.primitive(named:))
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 64)
        defer { block.deallocate() }
        SecureRandom.fill(block)
        let input = UnsafeRawBufferPointer(block)
        let key = try MACKey.generate()

        let throughput = chosen.filter {
            switch $0 {
            case .digest, .mac, .aead: true
            case .signature, .pbkdf2, .scrypt, .keychain, .http: false
            }
        }
        let signatures = chosen.compactMap { if case .signature(let type) = $0 { type } else { nil } }
        let kdfs = chosen.filter {
            switch $0 {
            case .pbkdf2, .scrypt: true
            default: false
            }
        }
        let aeadKey = AEADKey.generate()
        let nonce = [UInt8](repeating: 7, count: 12)
        if !json && !throughput.isEmpty {
            Terminal.writeLine("coffer \(CofferVersion.current) speed: \(bytes)-byte blocks, \(formatDecimal(seconds, places: 1)) s per algorithm")
            Terminal.writeLine(pad("algorithm", 20) + padLeft("ops/s", 14) + padLeft("MB/s", 12) + padLeft("1000s of bytes/s", 20))
            Terminal.flushStandardOutput()
        }
        for primitive in throughput {
            let result: Measurement
            switch primitive {
            case .signature, .pbkdf2, .scrypt, .keychain, .http:
                continue
            case .aead(let algorithm):
                result = measure { try? algorithm.seal(input, key: aeadKey, nonce: nonce) { _ in } }
            case .digest(let algorithm):
                result = measure { _ = algorithm.hash(input) }
            case .mac(let algorithm):
                result = measure {
                    var authenticator = MessageAuthenticator(algorithm, key: key)
                    authenticator.update(input)
                    _ = try? authenticator.finalize()
                }
            }
            let bytesPerSecond = result.operationsPerSecond * Double(bytes)
            if json {
                try JSONLines.write(SpeedRecord(
                    algorithm: primitive.name, blockBytes: bytes, operations: result.operations,
                    seconds: result.seconds, operationsPerSecond: result.operationsPerSecond, bytesPerSecond: bytesPerSecond
                ))
            } else {
                Terminal.writeLine(
                    pad(primitive.name, 20)
                        + padLeft(formatDecimal(result.operationsPerSecond, places: 1), 14)
                        + padLeft(formatDecimal(bytesPerSecond / 1e6, places: 1), 12)
                        + padLeft(formatDecimal(bytesPerSecond / 1e3, places: 2) + "k", 20)
                )
            }
            Terminal.flushStandardOutput()
        }
        if !signatures.isEmpty { try measureSignatures(signatures, afterTable: !throughput.isEmpty) }
        if !kdfs.isEmpty { try measureKDFs(kdfs, afterTable: !throughput.isEmpty || !signatures.isEmpty) }
        if chosen.contains(where: { if case .keychain = $0 { true } else { false } }) {
            try measureKeychain(items: keychainItems, afterTable: chosen.count > 1)
        }
        let httpChoices = chosen.compactMap { primitive -> [HTTPSignatureAlgorithm]? in
            guard case .http(let algorithm) = primitive else { return nil }
            return algorithm.map { [$0] } ?? HTTPSignatureAlgorithm.allCases
        }
        if !httpChoices.isEmpty {
            var algorithms: [HTTPSignatureAlgorithm] = []
            for algorithm in httpChoices.joined() where !algorithms.contains(algorithm) { algorithms.append(algorithm) }
            try measureHTTPSignatures(algorithms, afterTable: chosen.count > httpChoices.count)
        }
    }

    /// PBKDF2 iterations per second and scrypt derivations per second.
    private func measureKDFs(_ kdfs: [Primitive], afterTable: Bool) throws {
        if !json && afterTable { Terminal.writeLine("") }
        let password = Array("password".utf8)
        let salt = [UInt8](repeating: 1, count: 16)
        for kdf in kdfs {
            switch kdf {
            case .pbkdf2:
                let batch = 10_000
                let result = measure { _ = try? PasswordKDF.pbkdf2(iterations: batch).derive(password: password, salt: salt) }
                let rate = result.operationsPerSecond * Double(batch)
                if json {
                    try JSONLines.write(KDFSpeedRecord(algorithm: "pbkdf2-hmac-sha256", unit: "iterations/s", rate: rate))
                } else {
                    Terminal.writeLine(pad("pbkdf2-hmac-sha256", 20) + padLeft(formatDecimal(rate, places: 0), 14) + " iterations/s")
                }
            case .scrypt:
                let result = measure { _ = try? PasswordKDF.scrypt(logN: 14, r: 8, p: 1).derive(password: password, salt: salt) }
                if json {
                    try JSONLines.write(KDFSpeedRecord(algorithm: "scrypt-n14-r8-p1", unit: "derivations/s", rate: result.operationsPerSecond))
                } else {
                    Terminal.writeLine(pad("scrypt N=2^14 r=8", 20) + padLeft(formatDecimal(result.operationsPerSecond, places: 1), 14) + " derivations/s")
                }
            default:
                continue
            }
            Terminal.flushStandardOutput()
        }
    }

    /// Sign and verify operations per second, each for `seconds`.
    private func measureSignatures(_ types: [KeyAlgorithm], afterTable: Bool) throws {
        if !json {
            if afterTable { Terminal.writeLine("") }
            Terminal.writeLine(pad("signature", 20) + padLeft("sign/s", 14) + padLeft("verify/s", 14))
            Terminal.flushStandardOutput()
        }
        let message = Array(repeating: UInt8(0x5A), count: 64)
        let digest = DigestAlgorithm.sha256.hash(message)
        for type in types {
            let key = try SigningKey.generate(type)
            let publicKey = key.verifyingKey
            let signsWholeMessage = type.signsMessagesWhole
            let options = SignatureOptions(hash: .sha256)
            let signature = signsWholeMessage ? try key.signature(for: message) : try key.signature(for: digest, options: options)
            let signing = measure {
                _ = signsWholeMessage ? try? key.signature(for: message) : try? key.signature(for: digest, options: options)
            }
            let verifying = measure {
                _ = signsWholeMessage
                    ? publicKey.isValidSignature(signature, for: message)
                    : publicKey.isValidSignature(signature, for: digest, options: options)
            }
            if json {
                try JSONLines.write(SignatureSpeedRecord(
                    algorithm: type.name, signsPerSecond: signing.operationsPerSecond, verifiesPerSecond: verifying.operationsPerSecond
                ))
            } else {
                Terminal.writeLine(
                    pad(type.name, 20)
                        + padLeft(formatDecimal(signing.operationsPerSecond, places: 1), 14)
                        + padLeft(formatDecimal(verifying.operationsPerSecond, places: 1), 14)
                )
            }
            Terminal.flushStandardOutput()
        }
    }

    /// Sign and verify operations per second for a key given with -k (a file, or a token's).
    private func measureSigner(_ signer: SigningKey, name: String) throws {
        let message = Array(repeating: UInt8(0x5A), count: 64)
        let digest = DigestAlgorithm.sha256.hash(message)
        let options = SignatureOptions(hash: .sha256)
        let whole = signer.algorithm.signsMessagesWhole
        let signature = whole ? try signer.signature(for: message, options: SignatureOptions()) : try signer.signature(for: digest, options: options)
        let publicKey = signer.verifyingKey
        let signing = measure { _ = whole ? try? signer.signature(for: message, options: SignatureOptions()) : try? signer.signature(for: digest, options: options) }
        let verifying = measure {
            _ = whole ? publicKey.isValidSignature(signature, for: message) : publicKey.isValidSignature(signature, for: digest, options: options)
        }
        if json {
            return try JSONLines.write(SignatureSpeedRecord(algorithm: name, signsPerSecond: signing.operationsPerSecond, verifiesPerSecond: verifying.operationsPerSecond))
        }
        Terminal.writeLine(pad("signature", 20) + padLeft("sign/s", 14) + padLeft("verify/s", 14))
        Terminal.writeLine(
            pad(name, 20) + padLeft(formatDecimal(signing.operationsPerSecond, places: 1), 14) + padLeft(formatDecimal(verifying.operationsPerSecond, places: 1), 14)
        )
    }

    struct Measurement {
        let operations: Int
        let seconds: Double
        var operationsPerSecond: Double { Double(operations) / seconds }
    }

    /// Runs `operation` repeatedly for `seconds` (after a warm-up of a tenth of that, at most 0.5 s),
    /// reading the clock only every 16 operations so that timing does not weigh on small blocks.
    private func measure(_ operation: () -> Void) -> Measurement {
        let clock = ContinuousClock()
        func run(for duration: Duration) -> (Int, Duration) {
            let start = clock.now
            var operations = 0
            while true {
                for _ in 0..<16 { operation() }
                operations += 16
                let elapsed = clock.now - start
                if elapsed >= duration { return (operations, elapsed) }
            }
        }
        _ = run(for: .seconds(min(0.5, seconds / 10)))
        let (operations, elapsed) = run(for: .seconds(seconds))
        let components = elapsed.components
        return Measurement(operations: operations, seconds: Double(components.seconds) + Double(components.attoseconds) / 1e18)
    }

    func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}

/// The `--json` shape of one KDF measurement.
struct KDFSpeedRecord: Encodable {
    let algorithm: String
    let unit: String
    let rate: Double
}

/// The `--json` shape of one signature measurement.
struct SignatureSpeedRecord: Encodable {
    let algorithm: String
    let signsPerSecond: Double
    let verifiesPerSecond: Double
}

/// The `--json` shape of one measurement.
struct SpeedRecord: Encodable {
    let algorithm: String
    let blockBytes: Int
    let operations: Int
    let seconds: Double
    let operationsPerSecond: Double
    let bytesPerSecond: Double
}
