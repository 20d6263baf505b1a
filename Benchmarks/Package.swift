// swift-tools-version:6.1
//
// In-process benchmarks of the Coffer library (ordo-one/benchmark). A separate package so that the
// benchmark framework and its dependencies never enter users' builds or the main test run.
//
//   cd Benchmarks && swift package benchmark                 # run all
//   swift package benchmark --filter "SHA-256.*"             # some
//   scripts/benchmark-thresholds check                       # HotPaths against Thresholds/ (CI runs it)
import PackageDescription

let package = Package(
    name: "coffer-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "coffer", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "CofferBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CofferCore", package: "coffer"),
                .product(name: "CofferCrypto", package: "coffer"),
                .product(name: "CofferHTTPSignatures", package: "coffer"),
                "SignedRequestFixture",
            ],
            path: "Benchmarks/CofferBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The hot paths whose allocations CI holds to the committed Thresholds/<toolchain>/: a target of its
        // own, so that checking them builds only what they use.
        .executableTarget(
            name: "HotPaths",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CofferCrypto", package: "coffer"),
                .product(name: "CofferFormats", package: "coffer"),
                .product(name: "CofferHTTPSignatures", package: "coffer"),
                .product(name: "CofferKeychain", package: "coffer"),
                "SignedRequestFixture",
            ],
            path: "Benchmarks/HotPaths",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // TLS handshakes on loopback with BoringSSL's verification and with Coffer's pinning evaluator, the
        // configurations interleaved in rounds: `swift run -c release pinning-handshakes`.
        .executableTarget(
            name: "pinning-handshakes",
            dependencies: [
                .product(name: "CofferPinning", package: "coffer"),
                .product(name: "CofferTesting", package: "coffer"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            path: "Handshakes"
        ),
        // The CPU time of each step of verifying a signed request, in process, as built (with or without
        // cross-module optimization, to compare the two): `swift run -c release verify-cost`.
        .executableTarget(
            name: "verify-cost",
            dependencies: [
                .product(name: "CofferCrypto", package: "coffer"), .product(name: "CofferHTTPSignatures", package: "coffer"),
                "SignedRequestFixture",
            ],
            path: "VerifyCost"
        ),
        // The signed request both of the above verify.
        .target(
            name: "SignedRequestFixture",
            dependencies: [
                .product(name: "CofferCrypto", package: "coffer"),
                .product(name: "CofferHTTPSignatures", package: "coffer"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "SignedRequestFixture"
        ),
        // The server bench/serve-load.py drives: coffer serve's routes plus an unsigned twin route, built
        // from the library's public pieces (the twin is not in the product).
        .executableTarget(
            name: "serve-load-server",
            dependencies: [
                .product(name: "CofferServer", package: "coffer"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                "UnsignedTwin",
            ],
            path: "ServeLoad"
        ),
        // The signed route and its unsigned twin through coffer serve's router, in process (no socket):
        // `swift run -c release -Xswiftc -cross-module-optimization route-cost`.
        .executableTarget(
            name: "route-cost",
            dependencies: [
                .product(name: "CofferCore", package: "coffer"),
                .product(name: "CofferCrypto", package: "coffer"),
                .product(name: "CofferHTTPSignatures", package: "coffer"),
                .product(name: "CofferServer", package: "coffer"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                "UnsignedTwin",
            ],
            path: "RouteCost"
        ),
        // The unsigned twin of POST /register_user both of the above add beside coffer serve's routes.
        .target(
            name: "UnsignedTwin",
            dependencies: [
                .product(name: "CofferCrypto", package: "coffer"),
                .product(name: "CofferHTTPSignatures", package: "coffer"),
                .product(name: "CofferServer", package: "coffer"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "UnsignedTwin"
        ),
        // What the most costly password header the default limits accept makes a reader do, against the
        // default derivation (issue 42): `swift run -c release kdf-cost`.
        .executableTarget(
            name: "kdf-cost",
            dependencies: [.product(name: "CofferCrypto", package: "coffer")],
            path: "KDFCost"
        ),
    ],
    swiftLanguageModes: [.v6]
)
