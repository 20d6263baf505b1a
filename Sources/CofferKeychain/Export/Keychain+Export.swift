import CofferCore
public import CofferCrypto
public import CofferFormats
import Crypto
import Foundation

/// What an export wrote.
public struct KeychainExportSummary: Sendable, Hashable {
    /// Items in the export.
    public var exported: Int
    /// `*ThisDeviceOnly` items left out, as their accessibility requires.
    public var skippedThisDeviceOnly: Int
}

/// What an import added.
public struct KeychainImportSummary: Sendable, Hashable {
    /// Items added.
    public var imported: Int
    /// Items left out because the keychain already had an item with the same identity
    /// (only with ``KeychainImportConflict/skipExisting``).
    public var skippedExisting: Int
    /// Items left out because this keychain deleted an item of the same identity after the export was
    /// made, or the export does not say when it was made (only with ``KeychainImportConflict/skipExisting``).
    public var skippedDeleted: Int = 0
}

/// Whose export an import accepts (docs/KEYCHAIN.md, "Who wrote an export"). Opening an export proves
/// who wrote it only when it opens with something secret to both sides: a password or a 32-byte key. A
/// recipient's public key is public, so an export that opens with a recipient's private key proves
/// nothing about its author unless it carries the signature of a key the importer names.
public enum KeychainExportAuthor: Sendable, Hashable {
    /// Whoever holds the export's password or key, which only its author and its reader share (the
    /// default). An export that opens with a recipient's private key is refused: name its signer.
    case credentialHolder
    /// Only an export signed by this key (compared by its SubjectPublicKeyInfo) and, when it opens with
    /// a recipient's private key, signed for that recipient.
    case signer(VerifyingKey)
    /// Any export that opens, signed or not, as Coffer 1.0.0 imported exports to recipients.
    /// - Warning: anyone who has the recipient's public key can write such an export and plant
    ///   passwords, signing keys and encryption keys in the keychain. Only for a file whose origin the
    ///   caller checked another way.
    case insecureAnyone
}

/// What an import does when the keychain already has an item of the same identity.
public enum KeychainImportConflict: Sendable, Hashable {
    /// Import nothing and throw `.duplicateItem` (the default: an import never half-happens).
    case fail
    /// Keep the keychain's item and import the others; leave out, too, items this keychain deleted
    /// after the export was made.
    case skipExisting
}

extension Keychain {
    /// How far ahead of this machine's clock an export's time may be and still be believed (a day).
    static let exportTimeTolerance: TimeInterval = 86_400

    /// Largest export file ``importItems(fromPath:credential:author:limits:ifExists:restoringDeleted:)`` reads (1 GiB).
    public static let maximumExportFileSize = 1 << 30

    /// Exports every item that may leave this device into one file in the Coffer encrypted format
    /// (docs/KEYCHAIN.md, "Export file"). `*ThisDeviceOnly` items are left out. Items with an
    /// application password stay sealed under it inside the export; everything else is in the
    /// export's plaintext, so the export's protection (a password, a key or recipients) is what guards it.
    ///
    /// An export to recipients must be signed: their public keys are public, so the signature is what
    /// tells an importer who wrote it (``KeychainExportAuthor``). The signature covers the items and
    /// the recipients' fingerprints, so a recipient cannot pass it on as made for someone else.
    /// - Parameters:
    ///   - keychainPassword: asked again, as exporting reveals every secret: the keychain need
    ///     not be unlocked, and user-presence items are exported on the strength of this password.
    ///   - protection: who will be able to open the export: a password, a key or recipients.
    ///   - signer: the exporter's key, whose public half importers name; required for recipients,
    ///     optional otherwise. A key on a token (`SigningKey(tokenKey)`) signs as a software key does.
    ///   - cipher: the export's cipher (AES-256-GCM by default).
    /// - Returns: the encrypted export and what it holds.
    /// - Throws: `.authenticationFailed` for a wrong keychain password, `.dataCorrupted` when a row does
    ///   not open (nothing is exported then), `.badParameter` for an unusable protection, recipients
    ///   without a signer, or a signer that cannot sign.
    public func exportItems(
        keychainPassword: String, protection: EncryptionProtection, signedBy signer: SigningKey? = nil,
        cipher: EncryptionCipher = .aes256GCM
    ) throws(KeychainError) -> (file: [UInt8], summary: KeychainExportSummary) {
        // Who holds a public key could have written the export: such recipients need the signature.
        let publicRecipients = protection.fileKeyRecipients.compactMap { $0.publicKeyInfo }
        if !publicRecipients.isEmpty {
            guard signer != nil else {
                throw KeychainError(
                    .badParameter,
                    "an export to recipients must be signed (signedBy): their public keys are public, so without the exporter's signature an importer cannot tell who wrote it"
                )
            }
        }
        let audience = publicRecipients.map { KeyFingerprint(subjectPublicKeyInfo: $0).sha256 }
        let header = try requireHeader()
        let master = try KeychainCrypto.unwrap(password: Array(keychainPassword.utf8), header: header, limits: passwordLimits)
        var exported: [ExportedItem] = []
        var skipped = 0
        defer {
            for index in exported.indices { SecretBytes.wipe(&exported[index].secret) }
        }
        for itemClass in ItemClass.allCases {
            var query = KeychainQuery(itemClass: itemClass)
            query.matchLimit = .all
            for row in try storage.find(query, limit: nil) {
                guard !row.item.accessibility.isThisDeviceOnly else {
                    skipped += 1
                    continue
                }
                let key = KeychainCrypto.classKey(master: master, keychainID: header.keychainID, accessibility: row.item.accessibility)
                let inner = try KeychainCrypto.open(row.sealed, key: key, ad: KeychainCrypto.itemAD(keychainID: header.keychainID, item: row.item))
                exported.append(ExportedItem(item: row.item, secret: inner))
            }
        }
        var document: [UInt8]
        if let signer {
            do {
                document = try ExportDocument.encode(exported, signedBy: signer, audience: audience, madeAt: Date())
            } catch let error as KeychainError {
                throw error
            } catch {
                throw KeychainError(.badParameter, "cannot sign the export: \(error)", underlying: error)
            }
        } else {
            document = ExportDocument.encode(exported)
        }
        defer { SecretBytes.wipe(&document) }
        do {
            let file = try CofferEncryption.encrypt(document, to: protection, cipher: cipher)
            return (file, KeychainExportSummary(exported: exported.count, skippedThisDeviceOnly: skipped))
        } catch {
            throw KeychainError(.badParameter, "cannot encrypt the export: \(error)", underlying: error)
        }
    }

    /// ``exportItems(keychainPassword:protection:signedBy:cipher:)`` into a file, created 0600 under a
    /// temporary name beside `path` and renamed only when complete.
    /// - Throws: also `.ioFailure` when the file cannot be written, or exists and `overwrite` is false.
    @discardableResult
    public func exportItems(
        toPath path: String, keychainPassword: String, protection: EncryptionProtection, signedBy signer: SigningKey? = nil,
        cipher: EncryptionCipher = .aes256GCM, overwrite: Bool = false
    ) throws(KeychainError) -> KeychainExportSummary {
        let (file, summary) = try exportItems(keychainPassword: keychainPassword, protection: protection, signedBy: signer, cipher: cipher)
        do {
            let writer = try AtomicFileWriter(destination: path, overwrite: overwrite)
            try writer.write(file)
            try writer.commit()
        } catch {
            throw KeychainError(.ioFailure, "cannot write the export: \(error)", underlying: error)
        }
        return summary
    }

    /// Adds the items of an export, in one transaction: all of them (less those skipped by
    /// `ifExists`), or none. Items keep their attributes, dates, accessibility and access control; an
    /// item with an application password still needs it to be read. The keychain must be unlocked for
    /// the accessibilities the export holds. Who wrote the export is checked before anything is added
    /// (``KeychainExportAuthor``): by default, an export that opens with a recipient's private key is
    /// refused, since anyone who has the public key could have made it.
    /// - Parameters:
    ///   - file: the encrypted export.
    ///   - credential: what opens it: its password, its key, or a recipient's private key.
    ///   - author: whose exports to accept: the holder of the password or key (the default), the
    ///     holder of a signing key, or, insecurely, anyone.
    ///   - limits: the most key-derivation work to do before knowing whether the password is right.
    ///   - ifExists: what to do with items the keychain already has (and, skipping, with items it
    ///     deleted after the export was made).
    ///   - restoringDeleted: import items this keychain deleted after the export was made (or, for an
    ///     export that does not say when it was made, ever deleted). Without it, such an item refuses
    ///     the import (docs/KEYCHAIN.md, "Deleted items"): an old export must not bring back a secret
    ///     that was deleted.
    /// - Throws: `.authenticationFailed` when `credential` does not open the export (or it was
    ///   changed), `.untrustedExport` when its author is not the one `author` accepts (unsigned, signed
    ///   by another key or for other recipients, or a signature that does not verify) or when it would
    ///   bring back a deleted item, `.dataCorrupted`
    ///   for a damaged or foreign file, `.badParameter` when the export's KDF cost is above `limits`,
    ///   `.duplicateItem` on a clash with ``KeychainImportConflict/fail``, `.interactionNotAllowed` while
    ///   locked. Nothing is imported when it throws.
    @discardableResult
    public func importItems(
        _ file: [UInt8], credential: DecryptionCredential, author: KeychainExportAuthor = .credentialHolder,
        limits: PasswordKDFLimits = PasswordKDFLimits(), ifExists: KeychainImportConflict = .fail, restoringDeleted: Bool = false
    ) throws(KeychainError) -> KeychainImportSummary {
        var document: [UInt8]
        do {
            document = try CofferEncryption.decrypt(file, with: credential, limits: limits)
        } catch {
            throw Self.importError(error)
        }
        defer { SecretBytes.wipe(&document) }
        let contents = try ExportDocument.read(document)
        var items = contents.items
        defer {
            for index in items.indices { SecretBytes.wipe(&items[index].secret) }
        }
        try ExportAuthorCheck.check(contents.proof, openedWith: credential, accepting: author)
        let header = try requireHeader()
        var rows: [(KeychainItem, [UInt8])] = []
        rows.reserveCapacity(items.count)
        for exported in items {
            let key = try classKey(for: exported.item.accessibility)
            let sealed = try KeychainCrypto.seal(exported.secret, key: key, ad: KeychainCrypto.itemAD(keychainID: header.keychainID, item: exported.item))
            rows.append((exported.item, sealed))
        }
        // A time more than a day ahead of this machine's clock is not believed: such an export would
        // override every later deletion of its items. It counts as undated.
        let madeAt = contents.madeAt.flatMap { $0 <= Date().addingTimeInterval(Self.exportTimeTolerance) ? $0 : nil }
        let check = restoringDeleted ? nil : DeletionCheck(madeAt: madeAt, skipping: ifExists == .skipExisting)
        let count = try storage.insertAll(rows, skippingExisting: ifExists == .skipExisting, deletions: check)
        return KeychainImportSummary(
            imported: count.inserted, skippedExisting: rows.count - count.inserted - count.skippedDeleted, skippedDeleted: count.skippedDeleted
        )
    }

    /// ``importItems(_:credential:author:limits:ifExists:restoringDeleted:)`` from a file (at most ``maximumExportFileSize``).
    @discardableResult
    public func importItems(
        fromPath path: String, credential: DecryptionCredential, author: KeychainExportAuthor = .credentialHolder,
        limits: PasswordKDFLimits = PasswordKDFLimits(), ifExists: KeychainImportConflict = .fail, restoringDeleted: Bool = false
    ) throws(KeychainError) -> KeychainImportSummary {
        let file: [UInt8]
        do {
            guard let bytes = try FileReader.open(path).readAll(limit: Self.maximumExportFileSize) else {
                throw KeychainError(.badParameter, "'\(path)' is larger than 1 GiB: not a keychain export")
            }
            file = bytes
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.ioFailure, "cannot read '\(path)': \(error)", underlying: error)
        }
        return try importItems(file, credential: credential, author: author, limits: limits, ifExists: ifExists, restoringDeleted: restoringDeleted)
    }

    private static func importError(_ error: CofferFormatsError) -> KeychainError {
        switch error.code {
        case .authenticationFailed, .noMatchingKey, .wrongPassword:
            KeychainError(.authenticationFailed, "the export's password or key is wrong, or the file was changed")
        case .costTooHigh, .invalidArgument, .unsupported:
            KeychainError(.badParameter, error.reason, underlying: error)
        default:
            KeychainError(.dataCorrupted, "not a readable keychain export: \(error.reason)", underlying: error)
        }
    }
}
