// swift-tools-version:6.0
//
// Coffer: the everyday security kit for Swift apps and servers.
// Module map (dependencies point down only):
//
//   coffer (CLI) ──────────────┐
//        │                     │
//   CofferServer    the registration server (`coffer serve`): keys, users, replay cache on SQLite/PostgreSQL
//        │
//   CofferHummingbird  verifying middleware · CofferHTTPClient  signing AsyncHTTPClient helper
//        │          CofferServerWire  the server API's bodies and answers, shared by server and client
//        │
//   CofferPinning   TLS pin policies checked on top of chain/hostname validation (NIOSSL, AsyncHTTPClient)
//        │
//   CofferPins      pins and the certificates they are computed from, no transport (swift-certificates)
//   CofferFiles     protected data folders: 0700, atomic 0600 files, excluded from backups
//   CofferKeychain  items with Keychain Services semantics, SQLite store, export, sign-in sessions
//   CofferHTTPSignatures  RFC 9421 signatures, RFC 9530 Content-Digest, verifier policy, replay cache
//        │
//   CofferFormats   key formats, signature files, the encrypted format, RNCryptor, checksum lists
//        │
//   CofferCrypto    digests, HMAC, randomness, Gravatar — thin typed wrappers over swift-crypto
//        │
//   CofferCore      errors, hex/base64, constant-time compare, chunked file reading
//
// CofferTesting is a library of fixtures for users' tests and ours; CofferTestSupport (not a product)
// is our own test harness.
import PackageDescription

/// The commit being built, for `coffer --version`. SwiftPM's shared manifest cache may keep an earlier
/// evaluation (and commit) for a development build; scripts/install evaluates it afresh.
let buildCommit: String = {
    guard let git = Context.gitInformation else { return "unknown" }
    return String(git.currentCommit.prefix(12)) + (git.hasUncommittedChanges ? "-modified" : "")
}()

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "coffer",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CofferCore", targets: ["CofferCore"]),
        .library(name: "CofferCrypto", targets: ["CofferCrypto"]),
        .library(name: "CofferFormats", targets: ["CofferFormats"]),
        .library(name: "CofferKeychain", targets: ["CofferKeychain"]),
        .library(name: "CofferHTTPSignatures", targets: ["CofferHTTPSignatures"]),
        .library(name: "CofferHummingbird", targets: ["CofferHummingbird"]),
        .library(name: "CofferHTTPClient", targets: ["CofferHTTPClient"]),
        .library(name: "CofferServer", targets: ["CofferServer"]),
        .library(name: "CofferServerWire", targets: ["CofferServerWire"]),
        .library(name: "CofferPins", targets: ["CofferPins"]),
        .library(name: "CofferPinning", targets: ["CofferPinning"]),
        .library(name: "CofferPKCS11", targets: ["CofferPKCS11"]),
        .library(name: "CofferFiles", targets: ["CofferFiles"]),
        .library(name: "CofferTesting", targets: ["CofferTesting"]),
        .executable(name: "coffer", targets: ["coffer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.7.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        // `swift package generate-documentation`: CI builds every module's DocC catalogue with warnings as errors.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // Tests only: property-based tests in Swift Testing.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Tests only: the API contract test reads docs/openapi.yaml.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        .target(name: "CofferCore", dependencies: ["CCofferSupport"], swiftSettings: strictSwift),
        .target(
            name: "CofferCrypto",
            dependencies: [
                "CofferCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "CofferFormats",
            dependencies: [
                "CofferCore", "CofferCrypto",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "CofferKeychain",
            dependencies: [
                "CCofferSupport", "CofferCore", "CofferCrypto", "CofferFormats",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "CofferHTTPSignatures",
            dependencies: [
                "CofferCore", "CofferCrypto",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ],
            swiftSettings: strictSwift
        ),
        // Verifying signed requests in a Hummingbird 2 server.
        .target(
            name: "CofferHummingbird",
            dependencies: [
                "CofferHTTPSignatures",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        // Signing and sending requests with AsyncHTTPClient.
        // The server API's bodies and answers, defined once for CofferServer and CofferHTTPClient.
        .target(name: "CofferServerWire", swiftSettings: strictSwift),
        .target(
            name: "CofferHTTPClient",
            dependencies: [
                "CofferCore",
                "CofferCrypto",
                "CofferFormats",
                "CofferHTTPSignatures",
                "CofferServerWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        // The registration server behind `coffer serve`: keys, users and the replay cache on SQLite or PostgreSQL.
        .target(
            name: "CofferServer",
            dependencies: [
                "CofferCore", "CofferCrypto", "CofferFormats", "CofferHTTPSignatures", "CofferHummingbird", "CofferServerWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSwift
        ),
        // Pins and the certificates they are computed from, read from untrusted bytes with no transport
        // (swift-certificates and swift-crypto only), so that their readers are fuzzed without SwiftNIO.
        .target(
            name: "CofferPins",
            dependencies: [
                "CofferCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSwift
        ),
        // TLS pinning on top of normal validation: swift-certificates for chains, NIOSSL and AsyncHTTPClient
        // hooks; re-exports CofferPins.
        .target(
            name: "CofferPinning",
            dependencies: [
                "CofferCore", "CofferPins",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strictSwift
        ),
        // Keys that never leave hardware: a token's PKCS #11 module, loaded at run time (issue 24).
        .target(name: "CPKCS11"),
        .target(
            name: "CofferPKCS11",
            dependencies: [
                "CofferCore", "CofferCrypto", "CPKCS11",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        // Protected data folders: mode 0700, atomic 0600 files, excluded from backups.
        .target(name: "CofferFiles", dependencies: ["CofferCore", "CCofferSupport"], swiftSettings: strictSwift),
        // Fixtures for users' tests as well as ours: a test PKI, loopback TLS servers, temporary folders
        // and keychains, seeded keys, an RFC 9421 request signer.
        .target(
            name: "CofferTesting",
            dependencies: [
                "CofferCore", "CofferCrypto", "CofferKeychain", "CofferHTTPSignatures",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSwift
        ),
        // Coffer's own test harness, not a product: vector loaders, the command runner for the CLI and
        // OpenSSL, byte helpers.
        .target(
            name: "CofferTestSupport",
            dependencies: ["CofferTesting", "CofferCore", "CofferCrypto", "CCofferSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSwift
        ),
        // A C header for the libc and system calls Swift's Glibc module does not export (mallopt, keyrings, xattrs, fallocate).
        .target(name: "CCofferSupport"),
        .target(name: "CCofferBuildInfo", cSettings: [.define("COFFER_COMMIT", to: "\"\(buildCommit)\"")]),
        .executableTarget(
            name: "coffer",
            dependencies: [
                "CofferCore", "CofferCrypto", "CofferFormats", "CofferKeychain", "CCofferSupport", "CCofferBuildInfo",
                "CofferHTTPSignatures", "CofferHTTPClient", "CofferServer", "CofferServerWire", "CofferPinning", "CofferFiles", "CofferPKCS11",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(name: "CofferCoreTests", dependencies: ["CofferCore", "CofferTesting", "CofferTestSupport"], swiftSettings: strictSwift),
        .testTarget(
            name: "CofferCryptoTests",
            dependencies: ["CofferCrypto", "CofferTesting", "CofferTestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferFormatsTests",
            dependencies: ["CofferFormats", "CofferTesting", "CofferTestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferHTTPSignaturesTests",
            dependencies: [
                "CofferHTTPSignatures", "CofferCrypto", "CofferFormats", "CofferCore", "CofferTesting", "CofferTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferServerTests",
            dependencies: [
                "CofferServer", "CofferServerWire", "CofferHummingbird", "CofferHTTPClient", "CofferHTTPSignatures", "CofferCrypto", "CofferFormats", "CofferTesting", "CofferTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferHummingbirdTests",
            dependencies: [
                "CofferHummingbird", "CofferHTTPSignatures", "CofferCrypto", "CofferTesting", "CofferTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferHTTPClientTests",
            dependencies: [
                "CofferHTTPClient", "CofferHummingbird", "CofferPinning", "CofferHTTPSignatures", "CofferCrypto", "CofferTesting", "CofferTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferKeychainTests",
            dependencies: ["CofferKeychain", "CofferFormats", "CofferCrypto", "CofferCore", "CofferTesting", "CofferTestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferPinningTests",
            dependencies: [
                "CofferPinning", "CofferTesting", "CofferTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferPKCS11Tests",
            dependencies: [
                "CofferPKCS11", "CofferCore", "CofferCrypto", "CofferFormats", "CofferHTTPSignatures", "CofferKeychain", "CofferTesting", "CofferTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(name: "CofferFilesTests", dependencies: ["CofferFiles", "CofferCore", "CofferTesting", "CofferTestSupport"], swiftSettings: strictSwift),
        // End-to-end tests of the built binary; depending on the executable makes `swift test` build it.
        .testTarget(
            name: "CofferCLITests",
            dependencies: ["coffer", "CofferTesting", "CofferTestSupport"],
            exclude: ["Snapshots"],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
