import CofferCore
import CofferHummingbird
import Foundation
import Hummingbird
import Logging

/// Picks the master key a write wraps under: the one the database records as wrapping, when this
/// instance holds it; none otherwise, and the write is refused (docs/SERVER.md, "The master keyring").
/// The keyring is read for every write (writes are rare: a device's first data key, a rotation, an
/// HMAC registration); the data-key insert checks the key again in its own statement.
struct MasterKeyWriter: Sendable {
    let keyring: ServerMasterKeyring
    let store: any RegistrationStore

    /// The key to wrap a new row under, nil (logged) when this instance lacks the fleet's wrapping key.
    /// On a database that records no keyring yet, the first write records it as a starting instance
    /// would (``ServerMasterKeyring/check(_:against:abandoningRecordedKeyring:now:)``).
    func wrappingKey(logger: Logger) async throws -> ServerMasterKey? {
        do {
            let check = try await ServerMasterKeyring.check(keyring, against: store)
            return check.wrappingKeyID.flatMap(keyring.key(id:))
        } catch let error as ServerConfigurationError where error.code == .masterKeyringMismatch {
            logger.error("this instance lacks the master key its database wraps with: it writes nothing", metadata: ["reason": .string(error.reason)])
            return nil
        }
    }

    /// The answer to a write this instance may not make: `503 master-key-unavailable`, nothing written.
    static func refusal() -> Response {
        ProblemDetails(status: .serviceUnavailable, reason: "master-key-unavailable", detail: "the server cannot store a new key now; try again later").response()
    }

    /// The tagging every change of a key record is made with (docs/SERVER.md, "Authenticated key
    /// records"): under the fleet's wrapping key; nil for an instance without master keys, whose
    /// records carry no tag.
    /// - Throws: ``unavailable`` (`503 master-key-unavailable`, nothing written) when this instance lacks
    ///   the fleet's wrapping key.
    static func tagging(_ writer: MasterKeyWriter?, logger: Logger) async throws -> KeyRecordTagging? {
        guard let writer else { return nil }
        guard let key = try await writer.wrappingKey(logger: logger) else { throw unavailable }
        return KeyRecordTagging(keyring: writer.keyring, key: key)
    }

    /// The answer to a change of a key record this instance may not make.
    static let unavailable = ProblemDetails(
        status: .serviceUnavailable, reason: "master-key-unavailable", detail: "the server cannot change key records now; try again later"
    )

    /// An HMAC secret as the store keeps it: wrapped under the fleet's wrapping key, or base64 in clear
    /// when the instance has no master key (as Coffer always stored it); nil when the instance may not
    /// write (it lacks the wrapping key).
    static func storedSecret(_ secret: [UInt8], keyID: String, writer: MasterKeyWriter?, logger: Logger) async throws -> String? {
        guard let writer else { return Base64.encode(secret) }
        guard let key = try await writer.wrappingKey(logger: logger) else { return nil }
        return try WrappedSecret.seal(secret, keyID: keyID, under: key)
    }
}

/// An HMAC secret at rest under a master key: `wrapped-v1:<master key id>:<base64 of nonce ‖
/// ciphertext ‖ tag>`, AES-256-GCM bound to `coffer-hmac-secret-wrap v1:<key id>`, so a wrapped secret
/// opens only as the secret of the key it was stored for. A stored value without the prefix is a secret
/// in clear (base64), as earlier releases and instances without a master key store it.
enum WrappedSecret {
    static let prefix = "wrapped-v1:"
    /// A master key id's length (``ServerMasterKey/keyID``: 8 bytes, hex).
    static let masterKeyIDLength = 16

    /// What every secret wrapped under `masterKeyID` starts with.
    static func marker(_ masterKeyID: String) -> String { prefix + masterKeyID + ":" }

    static func context(keyID: String) -> [UInt8] { Array("coffer-hmac-secret-wrap v1:\(keyID)".utf8) }

    static func seal(_ secret: [UInt8], keyID: String, under key: ServerMasterKey) throws -> String {
        marker(key.keyID) + (try key.wrap(secret, context: context(keyID: keyID)))
    }

    /// The id of the master key a stored secret is wrapped under; nil for a secret in clear.
    /// - Throws: ``ServerConfigurationError`` `.invalidRecord` for a wrapped form that does not parse.
    static func masterKeyID(of stored: String) throws(ServerConfigurationError) -> String? {
        try parts(of: stored)?.masterKeyID
    }

    private static func parts(of stored: String) throws(ServerConfigurationError) -> (masterKeyID: String, sealed: Substring)? {
        guard stored.hasPrefix(prefix) else { return nil }
        let rest = stored.dropFirst(prefix.count)
        let id = rest.prefix(masterKeyIDLength)
        guard id.count == masterKeyIDLength, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              rest.dropFirst(masterKeyIDLength).first == ":" else {
            throw ServerConfigurationError(.invalidRecord, "a stored HMAC secret starts with '\(prefix)' but names no master key id; expected \(prefix)<16 hex digits>:<base64>")
        }
        return (String(id), rest.dropFirst(masterKeyIDLength + 1))
    }

    /// The secret of the key `keyID` from its stored form: opened with the master key it names, or
    /// decoded when stored in clear.
    /// - Throws: ``ServerConfigurationError`` `.masterKeyUnavailable` when `keyring` lacks the master
    ///   key the secret is wrapped under or the secret does not open (changed, or moved from another
    ///   key's row); `.invalidRecord` for a stored value that does not parse.
    static func open(_ stored: String, keyID: String, keyring: ServerMasterKeyring?) throws(ServerConfigurationError) -> [UInt8] {
        guard let (masterKeyID, sealed) = try parts(of: stored).map({ ($0.masterKeyID, $0.sealed) }) else {
            guard let bytes = try? Base64.decode(stored) else {
                throw ServerConfigurationError(.invalidRecord, "the stored secret of '\(keyID.clipped(toUTF8: 80))' is neither base64 nor wrapped")
            }
            return bytes
        }
        guard let key = keyring?.key(id: masterKeyID) else {
            throw ServerConfigurationError(
                .masterKeyUnavailable, "the secret of '\(keyID.clipped(toUTF8: 80))' is wrapped under master key \(masterKeyID), which this instance does not hold"
            )
        }
        guard let secret = key.unwrap(String(sealed), context: context(keyID: keyID)) else {
            throw ServerConfigurationError(
                .masterKeyUnavailable, "the secret of '\(keyID.clipped(toUTF8: 80))' does not open with master key \(masterKeyID): it was changed, or moved from another key's row"
            )
        }
        return secret
    }
}
