// swift-tools-version:6.0
//
// libFuzzer targets for every parser of untrusted input in Coffer. A separate package, so that users'
// builds and the main test run never compile it. One binary holds every target; COFFER_FUZZ_TARGET
// picks one. Build and run through the script:
//
//   scripts/fuzz --list
//   scripts/fuzz --seconds 60 key-import rncryptor
//
// or by hand (Linux; libFuzzer ships with the Swift toolchain):
//
//   swift build -c release --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address
//   COFFER_FUZZ_TARGET=key-import .build/release/coffer-fuzz -max_total_time=60 corpus/key-import
import PackageDescription

let package = Package(
    name: "coffer-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "coffer", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .executableTarget(
            name: "coffer-fuzz",
            dependencies: [
                .product(name: "CofferCore", package: "coffer"),
                .product(name: "CofferCrypto", package: "coffer"),
                .product(name: "CofferFormats", package: "coffer"),
                .product(name: "CofferHTTPSignatures", package: "coffer"),
                .product(name: "CofferKeychain", package: "coffer"),
                .product(name: "CofferPins", package: "coffer"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            // libFuzzer provides main(); our entry point is LLVMFuzzerTestOneInput.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
