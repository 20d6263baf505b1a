import CofferCore
import CofferCrypto
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Digests cross-checked against the system's own tools on the same random files.
@Suite("Digests against sha256sum, sha512sum and openssl", .serialized)
struct DigestInteropTests {
    static let chunk = FileReader.defaultChunkSize

    /// `openssl dgst` flags for each algorithm.
    static let openSSLFlag: [DigestAlgorithm: String] = [
        .sha256: "-sha256", .sha384: "-sha384", .sha512: "-sha512", .sha512_256: "-sha512-256",
        .sha3_256: "-sha3-256", .sha3_384: "-sha3-384", .sha3_512: "-sha3-512",
        .insecureSHA1: "-sha1", .insecureMD5: "-md5",
    ]

    static func openSSLDigest(_ algorithm: DigestAlgorithm, path: String) async throws -> String {
        let result = try await CommandRunner.run("openssl", ["dgst", try #require(openSSLFlag[algorithm]), "-r", path])
        try #require(result.status == 0, "openssl: \(result.standardError)")
        return String(result.output.prefix { $0 != " " })
    }

    static func coreutilsDigest(_ tool: String, path: String) async throws -> String {
        let result = try await CommandRunner.run(tool, [path])
        try #require(result.status == 0, "\(tool): \(result.standardError)")
        return String(result.output.prefix { $0 != " " })
    }

    @Test(
        .enabled(if: CommandRunner.isAvailable("openssl") && CommandRunner.isAvailable("sha256sum")),
        arguments: [0, 1, chunk - 1, chunk, chunk + 1]
    )
    func everyAlgorithmAtChunkBoundaries(size: Int) async throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Fixtures.randomBytes(count: size), to: "random.bin")
        for algorithm in DigestAlgorithm.allCases {
            await #expect(try algorithm.hash(fileAtPath: path).hex == Self.openSSLDigest(algorithm, path: path), "\(algorithm), \(size) bytes")
        }
        await #expect(try DigestAlgorithm.sha256.hash(fileAtPath: path).hex == Self.coreutilsDigest("sha256sum", path: path))
        await #expect(try DigestAlgorithm.sha512.hash(fileAtPath: path).hex == Self.coreutilsDigest("sha512sum", path: path))
    }

    @Test(.enabled(if: CommandRunner.isAvailable("openssl") && CommandRunner.isAvailable("sha256sum")))
    func hundredMebibytes() async throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Fixtures.randomBytes(count: 100 << 20), to: "large.bin")
        await #expect(try DigestAlgorithm.sha256.hash(fileAtPath: path).hex == Self.coreutilsDigest("sha256sum", path: path))
        await #expect(try DigestAlgorithm.sha512.hash(fileAtPath: path).hex == Self.coreutilsDigest("sha512sum", path: path))
        await #expect(try DigestAlgorithm.sha3_256.hash(fileAtPath: path).hex == Self.openSSLDigest(.sha3_256, path: path))
        await #expect(try DigestAlgorithm.sha512_256.hash(fileAtPath: path).hex == Self.openSSLDigest(.sha512_256, path: path))
    }

    @Test(.enabled(if: CommandRunner.isAvailable("openssl")))
    func hmacAgreesWithOpenSSL() async throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Fixtures.randomBytes(count: Self.chunk + 3), to: "message.bin")
        let keyBytes = Fixtures.randomBytes(count: 48)
        let key = try MACKey(bytes: keyBytes)
        for (algorithm, digest) in [(MACAlgorithm.hmacSHA256, "sha256"), (.hmacSHA384, "sha384"), (.hmacSHA512, "sha512"), (.insecureHMACSHA1, "sha1")] {
            let result = try await CommandRunner.run("openssl", ["dgst", "-\(digest)", "-mac", "HMAC", "-macopt", "hexkey:\(Hex.encode(keyBytes))", "-r", path])
            try #require(result.status == 0, "openssl: \(result.standardError)")
            let expected = String(result.output.prefix { $0 != " " })
            #expect(try algorithm.authenticationCode(forFileAtPath: path, using: key).hex == expected, "\(algorithm)")
        }
    }
}
