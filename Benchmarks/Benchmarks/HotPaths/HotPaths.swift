// The hot paths whose allocations CI holds to the committed thresholds in Thresholds/<toolchain>/
// (scripts/benchmark-thresholds checks and updates them; docs/PERFORMANCE.md, "Thresholds held by CI").
//
// Each benchmark runs its operation 1,000 times per sample (`scalingFactor: .kilo`), so a sample's
// malloc count is 1,000 × the allocations of one operation: one allocation more per operation is
// +1,000, twice the tolerance, while the counts themselves do not move from run to run. Only
// deterministic metrics are measured: no wall clock, and no instruction count (these machines have no
// hardware performance counters, so ordo-one's `instructions` metric reads 0 there).
//
// A fixture that cannot be made fails its benchmark (and so the check) rather than skipping it. Names
// have no spaces: ordo-one writes a threshold file with a name's spaces as underscores but looks it up
// with the name as it is, so a name with a space would never find its thresholds.
import Benchmark
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferKeychain
import Foundation
import SignedRequestFixture

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal],
        warmupIterations: 2,
        scalingFactor: .kilo,
        maxDuration: .seconds(60),
        maxIterations: 10,
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: HotPaths.tolerance])]
    )
    digestBenchmarks()
    signedRequestBenchmarks()
    encryptionBenchmarks()
    keychainBenchmarks()
}

enum HotPaths {
    /// The allowed difference from a sample's committed malloc count, either way: half an allocation per
    /// operation. Above it the check fails as a regression; below it, as an improvement whose thresholds
    /// are to be committed (`scripts/benchmark-thresholds update`).
    static let tolerance = 500

    /// The segment engine seals and opens a chunk's segments on two threads, and libdispatch's own
    /// allocations for them vary by about one per operation: two per operation here, still fewer than
    /// one more allocation per segment (+4 per operation) would add.
    static let segmentTolerance = 2_000

    /// Fixed, non-secret bytes: the same input in every run.
    static func pattern(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }
}

/// SHA-256 of a 16 KiB buffer in memory.
func digestBenchmarks() {
    let block = HotPaths.pattern(count: 16 * 1024)
    Benchmark("SHA-256_of_16_KiB") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(DigestAlgorithm.sha256.hash(block))
        }
    }
}

/// RFC 9421 verification of the signed POST /register_user that bench/wrk sends (HMAC-SHA256 over
/// `@method`, `@target-uri`, `content-digest`, `content-type`), its replay record handed to a cache that
/// accepts: the server's path without its store.
func signedRequestBenchmarks() {
    let fixture = Result { try SignedRegisterUser() }
    let verifier = fixture.map { HTTPMessageVerifier(keys: $0.keys, replayCache: AcceptingReplayCache()) }
    Benchmark("Verify_signed_request_HMAC-SHA256") { benchmark async throws in
        let (fixture, verifier) = (try fixture.get(), try verifier.get())
        for _ in benchmark.scaledIterations {
            blackHole(try await verifier.verify(fixture.request, body: fixture.body, now: fixture.created))
        }
    }
}

/// A plaintext of three and a half 64 KiB segments sealed and opened in memory under a raw 256-bit key
/// (AES-256-GCM, the default), through `CofferEncryption`'s public entry points.
func encryptionBenchmarks() {
    let plaintext = HotPaths.pattern(count: 7 * 32 * 1024)
    let key = Result { try EncryptionKey(bytes: HotPaths.pattern(count: 32)) }
    let sealed = Result { try CofferEncryption.encrypt(plaintext, to: .key(key.get())) }
    let configuration = Benchmark.Configuration(thresholds: [.mallocCountTotal: .init(absolute: [.p90: HotPaths.segmentTolerance])])
    Benchmark("Encrypt_3.5_segments", configuration: configuration) { benchmark throws in
        let key = try key.get()
        for _ in benchmark.scaledIterations {
            blackHole(try CofferEncryption.encrypt(plaintext, to: .key(key)))
        }
    }
    Benchmark("Decrypt_3.5_segments", configuration: configuration) { benchmark throws in
        let (key, sealed) = (try key.get(), try sealed.get())
        for _ in benchmark.scaledIterations {
            blackHole(try CofferEncryption.decrypt(sealed, with: .key(key)))
        }
    }
}

/// One generic password read by service and account, with its secret, from a keychain of 1,000 items: on
/// a temporary SQLite file (in the page cache after the warm-up, so no read waits for the disk), and in
/// memory.
func keychainBenchmarks() {
    let query = KeychainQuery.genericPassword(service: "com.example.bench", account: "user500@example.com")
    let folder = NSTemporaryDirectory() + "coffer-hot-paths-\(getpid())"
    nonisolated(unsafe) var onDisk: Keychain?
    Benchmark(
        "Keychain_read_SQLite",
        closure: { (benchmark: Benchmark) throws in
            guard let keychain = onDisk else { throw CocoaError(.fileNoSuchFile) }
            for _ in benchmark.scaledIterations {
                blackHole(try keychain.secret(matching: query))
            }
        },
        setup: {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            onDisk = try filled(Keychain.open(at: folder + "/keychain.db", create: true))
        },
        teardown: {
            onDisk = nil
            try FileManager.default.removeItem(atPath: folder)
        }
    )
    let inMemory = Result { try filled(Keychain.inMemory()) }
    Benchmark("Keychain_read_in_memory") { benchmark throws in
        let keychain = try inMemory.get()
        for _ in benchmark.scaledIterations {
            blackHole(try keychain.secret(matching: query))
        }
    }
}

/// `keychain` with a password and 1,000 generic passwords of 48 bytes.
private func filled(_ keychain: Keychain) throws -> Keychain {
    // The cheapest scrypt a keychain header records: unlocking is not what is measured.
    try keychain.create(password: "benchmark password", kdf: .scrypt(logN: 10, r: 8, p: 1))
    let secret = Array("a secret of typical token length, 48 bytes long!".utf8)
    try keychain.add(contentsOf: (0..<1_000).map {
        (item: KeychainItem.genericPassword(service: "com.example.bench", account: "user\($0)@example.com"), secret: secret)
    })
    return keychain
}
