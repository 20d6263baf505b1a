import CofferCore
import CofferCrypto
import Foundation

/// One item in an export: its attributes and its secret as the export carries it — the plaintext, or
/// for an item with an application password the inner layer still sealed under that password.
struct ExportedItem: Sendable {
    var item: KeychainItem
    var secret: [UInt8]
}

/// The exporter's proof a version 2 document carries (docs/KEYCHAIN.md, "Who wrote an export"): the
/// key that signed it, the recipients it was signed for, and the signature over everything before it.
struct ExportProof: Sendable {
    /// The signer's public key, as the document names it (to be compared with the one the importer
    /// trusts, never trusted for itself).
    var signer: VerifyingKey
    /// SHA-256 fingerprints of the SubjectPublicKeyInfo of each recipient the export was made for;
    /// empty for an export under a password or a key.
    var audience: [[UInt8]]
    /// The signature.
    var signature: [UInt8]
    /// What the signature covers: the domain label, then every document byte before the signature.
    var signedBytes: [UInt8]
}

/// The plaintext of a keychain export (docs/KEYCHAIN.md, "Export file"). Encrypting it is the Coffer
/// encrypted format's job; this is only the list of items, in a layout a reader checks field by field.
/// Version 1 is the list alone; version 2 adds the exporter's signature and the recipients it was for;
/// version 3, what Coffer writes when it signs, adds the time the export was made, under the signature.
enum ExportDocument {
    static let magic = Array("COFFERKC".utf8)
    static let version: UInt8 = 1
    /// The version that carries the exporter's proof (read; written by Coffer 2.0.0).
    static let signedVersion: UInt8 = 2
    /// The version that carries the exporter's proof and the time the export was made.
    static let datedVersion: UInt8 = 3
    /// Most items a reader accepts (the count is read before any item).
    static let maximumItems = 10_000_000
    /// Largest secret field: a 1 MiB secret plus the application-password layer's 45 bytes.
    static let maximumSecret = (1 << 20) + 64
    static let maximumAttribute = 4096
    /// Largest signer key (an ML-DSA-87 SubjectPublicKeyInfo is 2,614 bytes) and signature (ML-DSA-87's
    /// are 4,627).
    static let maximumSignerKey = 4096
    static let maximumSignature = 8192
    /// Most recipients an export is signed for: as many as a Coffer file has stanzas.
    static let maximumAudience = 32
    /// What a version 2 signature covers first, so that it can be taken for nothing else.
    static let signatureDomain = Array("coffer-keychain-export v2".utf8) + [0]
    /// What a version 3 signature covers first.
    static let datedSignatureDomain = Array("coffer-keychain-export v3".utf8) + [0]

    /// What a reader found: the items, the exporter's proof for a version 2 or 3 document, and when a
    /// version 3 document was made.
    struct Contents {
        var items: [ExportedItem]
        var proof: ExportProof?
        var madeAt: Date?
    }

    // MARK: Writing

    /// A version 1 document: the items alone.
    static func encode(_ items: [ExportedItem]) -> [UInt8] {
        var out = magic
        out.append(version)
        appendItems(items, to: &out)
        return out
    }

    /// A version 3 document: the items, made at `madeAt`, signed by `signer` for `audience` (the
    /// recipients' fingerprints).
    /// - Throws: what `signer` throws when it cannot sign.
    static func encode(_ items: [ExportedItem], signedBy signer: SigningKey, audience: [[UInt8]], madeAt: Date) throws -> [UInt8] {
        try encode(items, signedBy: signer, audience: audience, dated: madeAt)
    }

    /// A version 2 document (no time), as Coffer 2.0.0 wrote it: for the tests that hold the reader to
    /// 2.0.0's files.
    static func encode(_ items: [ExportedItem], signedBy signer: SigningKey, audience: [[UInt8]]) throws -> [UInt8] {
        try encode(items, signedBy: signer, audience: audience, dated: nil)
    }

    private static func encode(_ items: [ExportedItem], signedBy signer: SigningKey, audience: [[UInt8]], dated madeAt: Date?) throws -> [UInt8] {
        let key = signer.verifyingKey.derRepresentation
        guard key.count <= maximumSignerKey, audience.count <= maximumAudience else {
            throw KeychainError(.badParameter, "expected a signer key of at most \(maximumSignerKey) bytes and at most \(maximumAudience) recipients; found \(key.count) bytes and \(audience.count)")
        }
        var out = magic
        out.append(madeAt == nil ? signedVersion : datedVersion)
        out += twoBytes(key.count) + key
        out.append(UInt8(truncatingIfNeeded: audience.count))
        for fingerprint in audience { out += fingerprint }
        if let madeAt { appendDate(madeAt, to: &out) }
        appendItems(items, to: &out)
        let signature = try signer.signature(forLabelled: (madeAt == nil ? signatureDomain : datedSignatureDomain) + out, options: SignatureOptions())
        guard signature.count <= maximumSignature else {
            throw KeychainError(.badParameter, "expected a signature of at most \(maximumSignature) bytes, found \(signature.count)")
        }
        out += twoBytes(signature.count) + signature
        return out
    }

    private static func appendItems(_ items: [ExportedItem], to out: inout [UInt8]) {
        appendLength(items.count, to: &out)
        for exported in items {
            let item = exported.item
            out.append(classCode(item.itemClass))
            out.append(accessibilityCode(item.accessibility))
            out.append((item.synchronizable ? 1 : 0) | (item.hasApplicationPassword ? 2 : 0) | (item.requiresUserPresence ? 4 : 0))
            appendDate(item.creationDate, to: &out)
            appendDate(item.modificationDate, to: &out)
            for field in fields(of: item) {
                guard let field else {
                    out.append(0)
                    continue
                }
                out.append(1)
                appendLength(field.count, to: &out)
                out += field
            }
            appendLength(exported.secret.count, to: &out)
            out += exported.secret
        }
    }

    /// The optional attributes in their fixed order (the spec's table).
    private static func fields(of item: KeychainItem) -> [[UInt8]?] {
        func text(_ value: String?) -> [UInt8]? { value.map { Array($0.utf8) } }
        return [
            text(item.accessGroup), text(item.service), text(item.account), text(item.server), text(item.protocol),
            text(item.port.map(String.init)), text(item.path), item.applicationTag, item.applicationLabel,
            text(item.keyClass?.rawValue), text(item.keyType), text(item.keySizeInBits.map(String.init)),
            item.issuer, item.serialNumber, text(item.label), text(item.comment),
        ]
    }

    /// A length below 65,536 (the key and signature limits are far lower) as 2 big-endian bytes.
    private static func twoBytes(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private static func appendLength(_ value: Int, to out: inout [UInt8]) {
        out += BigEndian.bytes(UInt32(truncatingIfNeeded: value))
    }

    private static func appendDate(_ date: Date?, to out: inout [UInt8]) {
        out += BigEndian.bytes((date ?? Date(timeIntervalSince1970: 0)).timeIntervalSince1970.bitPattern)
    }

    // MARK: Reading

    /// Parses an export's plaintext, version 1, 2 or 3, and returns its items.
    static func decode(_ bytes: [UInt8]) throws(KeychainError) -> [ExportedItem] {
        try read(bytes).items
    }

    /// Parses an export's plaintext. Every length is checked against the bytes left and its limit,
    /// every code against the spec, and the items are validated as `add` validates them. A version 2
    /// document's signer key must parse; its signature is returned to be checked, not checked here.
    /// - Throws: `.dataCorrupted` naming what is wrong.
    static func read(_ bytes: [UInt8]) throws(KeychainError) -> Contents {
        var reader = Reader(bytes: bytes)
        guard try reader.take(magic.count) == magic else {
            throw malformed("it does not start with COFFERKC: not a Coffer keychain export")
        }
        let version = try reader.byte()
        guard version == Self.version || version == signedVersion || version == datedVersion else {
            throw malformed("export version \(version) is not supported (this Coffer reads versions 1 to 3); upgrade coffer")
        }
        var signer: VerifyingKey?
        var audience: [[UInt8]] = []
        var madeAt: Date?
        if version != Self.version {
            let keyBytes = try reader.take(try reader.shortLength(limit: maximumSignerKey, what: "signer key length"))
            do {
                signer = try VerifyingKey(derRepresentation: keyBytes)
            } catch {
                throw malformed("the signer's public key does not parse: \(error.reason)")
            }
            let count = Int(try reader.byte())
            guard count <= maximumAudience else { throw malformed("it names \(count) recipients, above the limit \(maximumAudience)") }
            for _ in 0..<count { audience.append(try reader.take(32)) }
            if version == datedVersion { madeAt = try reader.date() }
        }
        let count = try reader.length(limit: maximumItems, what: "item count")
        var items: [ExportedItem] = []
        items.reserveCapacity(min(count, 100_000))
        for index in 0..<count {
            do throws(KeychainError) {
                items.append(try readItem(&reader))
            } catch {
                throw malformed("item \(index + 1) of \(count): \(error.reason)")
            }
        }
        var proof: ExportProof?
        if let signer {
            let signedEnd = reader.offset
            let signature = try reader.take(try reader.shortLength(limit: maximumSignature, what: "signature length"))
            let domain = version == datedVersion ? datedSignatureDomain : signatureDomain
            proof = ExportProof(signer: signer, audience: audience, signature: signature, signedBytes: domain + bytes[0..<signedEnd])
        }
        guard reader.isAtEnd else { throw malformed("\(reader.remaining) bytes follow the \(proof == nil ? "last item" : "signature")") }
        return Contents(items: items, proof: proof, madeAt: madeAt)
    }

    private static func readItem(_ reader: inout Reader) throws(KeychainError) -> ExportedItem {
        guard let itemClass = itemClass(code: try reader.byte()) else { throw malformed("unknown item class") }
        guard let accessibility = accessibility(code: try reader.byte()) else { throw malformed("unknown accessibility") }
        let flags = try reader.byte()
        guard flags & ~7 == 0 else { throw malformed("unknown flags \(flags)") }
        var item = KeychainItem(itemClass: itemClass, accessibility: accessibility)
        item.synchronizable = flags & 1 != 0
        item.hasApplicationPassword = flags & 2 != 0
        item.requiresUserPresence = flags & 4 != 0
        item.creationDate = try reader.date()
        item.modificationDate = try reader.date()
        var fields: [[UInt8]?] = []
        for _ in 0..<16 {
            switch try reader.byte() {
            case 0: fields.append(nil)
            case 1: fields.append(try reader.take(try reader.length(limit: maximumAttribute, what: "attribute length")))
            default: throw malformed("an attribute's presence byte is neither 0 nor 1")
            }
        }
        func text(_ index: Int) throws(KeychainError) -> String? {
            guard let bytes = fields[index] else { return nil }
            guard let string = String(validating: bytes, as: UTF8.self) else { throw malformed("an attribute is not UTF-8") }
            return string
        }
        func number(_ index: Int) throws(KeychainError) -> Int? {
            guard let string = try text(index) else { return nil }
            guard let value = Int(string), value >= 0 else { throw malformed("a number attribute is '\(string)'") }
            return value
        }
        item.accessGroup = try text(0)
        item.service = try text(1)
        item.account = try text(2)
        item.server = try text(3)
        item.protocol = try text(4)
        item.port = try number(5)
        item.path = try text(6)
        item.applicationTag = fields[7]
        item.applicationLabel = fields[8]
        if let keyClass = try text(9) {
            guard let value = KeyClass(rawValue: keyClass) else { throw malformed("unknown key class '\(keyClass)'") }
            item.keyClass = value
        }
        item.keyType = try text(10)
        item.keySizeInBits = try number(11)
        item.issuer = fields[12]
        item.serialNumber = fields[13]
        item.label = try text(14)
        item.comment = try text(15)
        do throws(KeychainError) {
            try item.validate()
        } catch {
            throw malformed(error.reason)
        }
        let secret = try reader.take(try reader.length(limit: maximumSecret, what: "secret length"))
        return ExportedItem(item: item, secret: secret)
    }

    private static func malformed(_ reason: String) -> KeychainError {
        KeychainError(.dataCorrupted, "the keychain export is damaged: \(reason)")
    }

    // MARK: Codes (fixed by the spec, independent of Swift case names)

    private static let classes: [ItemClass] = [.genericPassword, .internetPassword, .key, .certificate]
    private static let accessibilities: [Accessibility] = [
        .whenUnlocked, .afterFirstUnlock, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
    ]

    private static func classCode(_ value: ItemClass) -> UInt8 { UInt8(classes.firstIndex(of: value) ?? 0) + 1 }
    private static func accessibilityCode(_ value: Accessibility) -> UInt8 { UInt8(accessibilities.firstIndex(of: value) ?? 0) + 1 }
    private static func itemClass(code: UInt8) -> ItemClass? { (1...4).contains(code) ? classes[Int(code) - 1] : nil }
    private static func accessibility(code: UInt8) -> Accessibility? { (1...4).contains(code) ? accessibilities[Int(code) - 1] : nil }

    /// A cursor over the plaintext that never reads past its end.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }
        var isAtEnd: Bool { offset == bytes.count }

        mutating func take(_ count: Int) throws(KeychainError) -> [UInt8] {
            guard count <= remaining else { throw ExportDocument.malformed("it ends early (truncated)") }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func byte() throws(KeychainError) -> UInt8 { try take(1)[0] }

        mutating func length(limit: Int, what: String) throws(KeychainError) -> Int {
            let value = Int(BigEndian.uint32(try take(4)))
            guard value <= limit else { throw ExportDocument.malformed("\(what) \(value) is above the limit \(limit)") }
            return value
        }

        mutating func shortLength(limit: Int, what: String) throws(KeychainError) -> Int {
            let field = try take(2)
            let value = Int(field[0]) << 8 | Int(field[1])
            guard value <= limit else { throw ExportDocument.malformed("\(what) \(value) is above the limit \(limit)") }
            return value
        }

        mutating func date() throws(KeychainError) -> Date {
            let seconds = Double(bitPattern: BigEndian.uint64(try take(8)))
            guard seconds.isFinite else { throw ExportDocument.malformed("a date is not a finite number") }
            return Date(timeIntervalSince1970: seconds)
        }
    }
}
