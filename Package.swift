// swift-tools-version:6.0
//
// Coffer: the everyday security kit for Swift apps and servers.
// Module map (dependencies point down only):
//
//   coffer (CLI) ──────────────┐
//        │                     │
//   CofferKeychain  items with Keychain Services semantics, SQLite store, export, sign-in sessions
//   CofferHTTPSignatures  RFC 9421 signature bases (beside the keychain, on CofferCrypto)
//        │
//   CofferFormats   key formats, signature files, the encrypted format, RNCryptor, checksum lists
//        │
//   CofferCrypto    digests, HMAC, randomness, Gravatar — thin typed wrappers over swift-crypto
//        │
//   CofferCore      errors, hex/base64, constant-time compare, chunked file reading
//
// CofferTesting is a library of fixtures for our tests and for users' tests.
import PackageDescription

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
    ],
    targets: [
        .target(name: "CofferCore", swiftSettings: strictSwift),
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
                "CofferCore", "CofferCrypto", "CofferFormats",
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
        .target(name: "CofferTesting", dependencies: ["CofferCore", "CofferCrypto"], swiftSettings: strictSwift),
        // A C header for the one libc tuning call Swift's Glibc module does not export (mallopt).
        .target(name: "CCofferSupport"),
        .executableTarget(
            name: "coffer",
            dependencies: [
                "CofferCore", "CofferCrypto", "CofferFormats", "CofferKeychain", "CCofferSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(name: "CofferCoreTests", dependencies: ["CofferCore", "CofferTesting"], swiftSettings: strictSwift),
        .testTarget(
            name: "CofferCryptoTests",
            dependencies: ["CofferCrypto", "CofferTesting"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferFormatsTests",
            dependencies: ["CofferFormats", "CofferTesting"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferHTTPSignaturesTests",
            dependencies: [
                "CofferHTTPSignatures", "CofferCrypto", "CofferFormats", "CofferCore", "CofferTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CofferKeychainTests",
            dependencies: ["CofferKeychain", "CofferFormats", "CofferCrypto", "CofferCore", "CofferTesting"],
            swiftSettings: strictSwift
        ),
        // End-to-end tests of the built binary; depending on the executable makes `swift test` build it.
        .testTarget(
            name: "CofferCLITests",
            dependencies: ["coffer", "CofferTesting"],
            exclude: ["Snapshots"],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
