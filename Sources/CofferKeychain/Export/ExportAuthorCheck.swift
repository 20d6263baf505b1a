import CofferCore
import CofferCrypto
import CofferFormats

/// The import's one trust decision (docs/KEYCHAIN.md, "Who wrote an export"): from what the export
/// proves, never from what it says. Runs after the export opened and parsed, before anything is added.
enum ExportAuthorCheck {
    /// Refuses an export whose author `author` does not accept.
    /// - Parameters:
    ///   - proof: the version 2 document's signature, or nil for an unsigned (version 1) document.
    ///   - credential: what opened the export.
    ///   - author: whose exports the caller accepts.
    /// - Throws: `.untrustedExport` saying what was found and what was expected.
    static func check(_ proof: ExportProof?, openedWith credential: DecryptionCredential, accepting author: KeychainExportAuthor) throws(KeychainError) {
        let recipient = credential.fileKeyIdentity.publicKeyInfo.map { KeyFingerprint(subjectPublicKeyInfo: $0).sha256 }
        guard let proof else {
            switch author {
            case .signer(let expected):
                throw untrusted("the export is not signed; expected a signature by key \(expected.fingerprint.keyID)")
            case .credentialHolder where recipient != nil:
                throw untrusted(
                    "the export is not signed, and it opens with a recipient's private key: anyone who has the recipient's public key could have written it, so its items were refused. Ask the exporter for an export signed with their key and name that key (KeychainExportAuthor.signer), or accept an unsigned one (insecureAnyone) only for a file whose origin you checked"
                )
            case .credentialHolder, .insecureAnyone:
                return
            }
        }
        let signerID = proof.signer.fingerprint.keyID
        let verifier: VerifyingKey
        switch author {
        case .signer(let expected):
            guard expected == proof.signer else {
                throw untrusted("the export is signed by key \(signerID), not by key \(expected.fingerprint.keyID), the one named as its author")
            }
            verifier = expected
        case .credentialHolder where recipient != nil:
            throw untrusted(
                "the export is signed by key \(signerID), but no key was named as its author: with a recipient's private key, only the signature of a key you name proves who wrote it (KeychainExportAuthor.signer)"
            )
        case .credentialHolder, .insecureAnyone:
            // The password or key proves the author (or the caller gave up asking); the signature must
            // still hold, as any damage must be refused.
            verifier = proof.signer
        }
        guard verifier.isValidSignature(proof.signature, for: proof.signedBytes) else {
            throw untrusted("the export's signature does not verify with key \(signerID): it was changed after signing, or not signed by that key")
        }
        if let recipient {
            guard proof.audience.contains(where: { ConstantTime.equals($0, recipient) }) else {
                throw untrusted(
                    "the export was signed for \(proof.audience.isEmpty ? "a password or key, not for recipients" : "other recipients (\(proof.audience.map { Hex.encode($0.prefix(8)) }.joined(separator: ", ")))"), not for key \(Hex.encode(recipient.prefix(8))): someone who opened it encrypted it again"
                )
            }
        } else if !proof.audience.isEmpty {
            throw untrusted("the export was signed for recipients' private keys but opens with a password or key: someone who opened it encrypted it again")
        }
    }

    private static func untrusted(_ reason: String) -> KeychainError {
        KeychainError(.untrustedExport, reason)
    }
}
