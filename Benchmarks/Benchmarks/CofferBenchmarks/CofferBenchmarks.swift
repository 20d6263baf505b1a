import Benchmark
import CofferCore
import CofferCrypto
import Foundation

/// Throughput is reported in operations; each operation processes the input size named in the
/// benchmark, so bytes per second = throughput × size.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(2),
        maxIterations: 1_000_000
    )

    let block = (try? SecureRandom.bytes(count: 16 * 1024)) ?? []
    let small = Array(block.prefix(64))

    for algorithm in DigestAlgorithm.allCases {
        Benchmark("\(algorithm.standardName) one-shot 16 KiB") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(algorithm.hash(block))
            }
        }
    }

    Benchmark("SHA-256 one-shot 64 B") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(DigestAlgorithm.sha256.hash(small))
        }
    }

    Benchmark("SHA-256 incremental 16 KiB in 1 KiB updates") { benchmark in
        for _ in benchmark.scaledIterations {
            var digester = Digester(.sha256)
            for offset in stride(from: 0, to: block.count, by: 1024) {
                digester.update(block[offset..<(offset + 1024)])
            }
            blackHole(digester.finalize())
        }
    }

    let key = try? MACKey.generate()
    for algorithm in [MACAlgorithm.hmacSHA256, .hmacSHA512] {
        Benchmark("\(algorithm.standardName) 16 KiB") { benchmark in
            guard let key else { return }
            for _ in benchmark.scaledIterations {
                blackHole(try? algorithm.authenticationCode(for: block, using: key))
            }
        }
        Benchmark("\(algorithm.standardName) 64 B") { benchmark in
            guard let key else { return }
            for _ in benchmark.scaledIterations {
                blackHole(try? algorithm.authenticationCode(for: small, using: key))
            }
        }
    }

    // A 64 MiB file exercises the read-ahead path; after the first iteration it is in the page cache.
    let file = NSTemporaryDirectory() + "coffer-benchmark-\(getpid()).bin"
    Benchmark(
        "SHA-256 file 64 MiB",
        configuration: .init(metrics: [.wallClock, .peakMemoryResident, .mallocCountTotal], maxDuration: .seconds(5), maxIterations: 20),
        closure: { _ in blackHole(try? DigestAlgorithm.sha256.hash(fileAtPath: file)) },
        setup: {
            var bytes = [UInt8](repeating: 0, count: 64 << 20)
            bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
            _ = FileManager.default.createFile(atPath: file, contents: Data(bytes))
        },
        teardown: { try? FileManager.default.removeItem(atPath: file) }
    )

    let hex = Hex.encode(block.prefix(1024))
    let base64 = Base64.encode(block.prefix(1024))
    Benchmark("Hex decode 1 KiB") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try? Hex.decode(hex)) }
    }
    Benchmark("Base64 decode 1 KiB") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try? Base64.decode(base64)) }
    }
    Benchmark("Base64 encode 1 KiB") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(Base64.encode(block.prefix(1024))) }
    }

    signedRequestBenchmarks()
}
