import ArgumentParser
import CofferCrypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses `-a` for `coffer hash`, steering users of broken algorithms to their explicit names.
func parseDigestAlgorithm(_ name: String) throws -> DigestAlgorithm {
    if let algorithm = DigestAlgorithm(name: name) { return algorithm }
    switch name.lowercased() {
    case "md5":
        throw ValidationError("MD5 is broken; to check a legacy checksum anyway, say '-a insecure-md5'")
    case "sha1", "sha-1":
        throw ValidationError("SHA-1 is broken; to check a legacy checksum anyway, say '-a insecure-sha1'")
    default:
        let names = DigestAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
        throw ValidationError("unknown algorithm '\(name)'; expected one of: \(names)")
    }
}

/// Parses `-a` for `coffer hmac`: the hash name (`sha256`) or the full name (`hmac-sha256`).
func parseMACAlgorithm(_ name: String) throws -> MACAlgorithm {
    let folded = name.lowercased()
    if let algorithm = MACAlgorithm(rawValue: folded) ?? MACAlgorithm(rawValue: "hmac-" + folded) { return algorithm }
    if folded == "insecure-sha1" { return .insecureHMACSHA1 }
    if folded == "sha1" || folded == "hmac-sha1" {
        throw ValidationError("HMAC-SHA-1 is only for legacy protocols; say '-a insecure-sha1' to use it")
    }
    throw ValidationError("unknown algorithm '\(name)'; expected one of: sha256, sha384, sha512, insecure-sha1")
}

/// How a digest or tag is printed.
enum DigestEncoding: String, EnumerableFlag {
    case hex
    case base64

    static func help(for value: DigestEncoding) -> ArgumentHelp? {
        switch value {
        case .hex: "Print digests in lower-case hex."
        case .base64: "Print digests in standard base64."
        }
    }
}

/// One JSON object per line, keys sorted, for scripts (`jq` reads it).
enum JSONLines {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func write<Value: Encodable>(_ value: Value) throws {
        let data = try encoder.encode(value)
        Terminal.writeLine(String(decoding: data, as: UTF8.self))
    }
}
