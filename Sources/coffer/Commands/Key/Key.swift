// `coffer key`: the group, and the key-type parsing its subcommands share. One file per subcommand
// beside it (KeyGenerate, KeyShow, KeyConvert; keys on tokens in KeyToken.swift).

import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Generate, inspect and convert signing keys.",
        discussion: """
            Coffer reads keys in every format people meet and says which one it found: PEM or DER \
            SubjectPublicKeyInfo, PKCS#8 (plain or password-encrypted), PKCS#1 (RSA), SEC1 (EC), JWK, \
            Apple's SecKeyCopyExternalRepresentation bytes, and OpenSSH public-key lines.

            Every key is named by its key id (the first 16 hex digits of its fingerprint, the SHA-256 \
            of its SubjectPublicKeyInfo DER, the same value 'openssl pkey -pubout -outform DER | \
            openssl dgst -sha256' prints).
            """,
        subcommands: [KeyGenerate.self, KeyShow.self, KeyConvert.self, KeyList.self]
    )
}

/// What `coffer key generate` makes: a signing key, or an X25519 key for receiving encrypted files.
enum GeneratedKeyType: Equatable {
    case signing(KeyAlgorithm)
    case x25519
}

/// ssh-keygen's names for the types it makes by default: `-t rsa` is RSA-3072, `-t ecdsa` P-256.
let sshKeygenTypeAliases: [String: KeyAlgorithm] = ["rsa": .rsa3072, "ecdsa": .p256]

func parseKeyType(_ name: String) throws -> GeneratedKeyType {
    if name.lowercased() == "x25519" { return .x25519 }
    if let alias = sshKeygenTypeAliases[name.lowercased()] { return .signing(alias) }
    guard let type = KeyAlgorithm(name: name.lowercased()) else {
        throw ValidationError("unknown key type '\(name)'; expected one of: \((KeyAlgorithm.allCases.map(\.name) + ["x25519"]).joined(separator: ", "))")
    }
    return .signing(type)
}

func parseAppleKeyClass(_ name: String) throws -> AppleKeyClass {
    guard let keyClass = AppleKeyClass(rawValue: name.lowercased()) else {
        throw ValidationError("expected 'public' or 'private', found '\(name)'")
    }
    return keyClass
}
