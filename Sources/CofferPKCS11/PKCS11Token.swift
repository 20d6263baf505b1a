import CPKCS11

/// A slot of a module, and the token in it (`CK_SLOT_INFO`).
public struct PKCS11Slot: Sendable, Hashable {
    /// The module's number for the slot (`CK_SLOT_ID`, a URI's `slot-id`): stable only while the
    /// module is loaded.
    public let identifier: UInt
    /// The slot's description (a reader's name, for a card; a URI's `slot-description`).
    public let description: String
    /// The slot's manufacturer (a URI's `slot-manufacturer`).
    public let manufacturer: String
    /// The token in the slot, if there is one.
    public let token: PKCS11Token?

    let descriptionField: PaddedField
    let manufacturerField: PaddedField

    init(identifier: UInt, info: CK_SLOT_INFO, token: PKCS11Token?) {
        self.identifier = identifier
        descriptionField = PaddedField(info.slotDescription)
        manufacturerField = PaddedField(info.manufacturerID)
        description = descriptionField.text
        manufacturer = manufacturerField.text
        self.token = token
    }
}

/// What a token says of itself (`CK_TOKEN_INFO`). Anyone who makes a token chooses all of it: a
/// token is told apart from another by these words, never authenticated by them.
public struct PKCS11Token: Sendable, Hashable {
    /// The label given when the token was initialised (a URI's `token`).
    public let label: String
    /// The manufacturer, as the token names it (a URI's `manufacturer`).
    public let manufacturer: String
    /// The model (a URI's `model`).
    public let model: String
    /// The serial number (a URI's `serial`).
    public let serialNumber: String
    /// Whether the token has been initialised (has a label and PINs).
    public let isInitialized: Bool
    /// Whether the user must log in (a PIN) before using private objects.
    public let requiresLogin: Bool

    let labelField: PaddedField
    let manufacturerField: PaddedField
    let modelField: PaddedField
    let serialField: PaddedField
    /// `CK_TOKEN_INFO.flags` as read.
    let flags: UInt

    /// Whether a wrong user PIN was tried since the last successful login (`CKF_USER_PIN_COUNT_LOW`,
    /// which SoftHSM2 sets on every failed `C_Login`).
    var wrongPINTriedSinceLastLogin: Bool { flags & UInt(CKF_USER_PIN_COUNT_LOW) != 0 }

    init(_ info: CK_TOKEN_INFO) {
        labelField = PaddedField(info.label)
        manufacturerField = PaddedField(info.manufacturerID)
        modelField = PaddedField(info.model)
        serialField = PaddedField(info.serialNumber)
        label = labelField.text
        manufacturer = manufacturerField.text
        model = modelField.text
        serialNumber = serialField.text
        flags = UInt(info.flags)
        isInitialized = info.flags & CKF_TOKEN_INITIALIZED != 0
        requiresLogin = info.flags & CKF_LOGIN_REQUIRED != 0
    }
}

/// What a module says of itself (`CK_INFO`): a URI's `library-manufacturer`, `library-description`
/// and `library-version`.
public struct PKCS11LibraryInfo: Sendable, Hashable {
    /// The module's manufacturer.
    public let manufacturer: String
    /// The module's description.
    public let description: String
    /// The module's version, `major.minor`.
    public let version: PKCS11Version

    let manufacturerField: PaddedField
    let descriptionField: PaddedField

    init(_ info: CK_INFO) {
        manufacturerField = PaddedField(info.manufacturerID)
        descriptionField = PaddedField(info.libraryDescription)
        manufacturer = manufacturerField.text
        description = descriptionField.text
        version = PKCS11Version(major: info.libraryVersion.major, minor: info.libraryVersion.minor)
    }
}

/// A PKCS #11 version (`CK_VERSION`), written `major.minor` as RFC 7512's `library-version` is.
public struct PKCS11Version: Sendable, Hashable, CustomStringConvertible {
    /// The major version.
    public let major: UInt8
    /// The minor version.
    public let minor: UInt8

    /// A version from its two numbers.
    public init(major: UInt8, minor: UInt8) {
        self.major = major
        self.minor = minor
    }

    /// `major.minor`.
    public var description: String { "\(major).\(minor)" }
}

/// One of PKCS #11's fixed-width text fields (`CK_UTF8CHAR[32]` and the like), which are padded with
/// blanks: its bytes without the padding, and its width. RFC 7512 compares a URI's value with such a
/// field as the value padded to the field's width, so a value longer than the field matches nothing.
struct PaddedField: Sendable, Hashable {
    /// The field's bytes without trailing blanks (or the NULs some modules pad with).
    let bytes: [UInt8]
    /// The field's width in bytes.
    let width: Int

    init<Field>(_ field: Field) {
        (bytes, width) = withUnsafeBytes(of: field) { raw in
            var end = raw.endIndex
            while end > raw.startIndex, raw[end - 1] == 0x20 || raw[end - 1] == 0 { end -= 1 }
            return (Array(raw[..<end]), raw.count)
        }
    }

    /// The field as text, for messages and reports (bytes that are not UTF-8 shown as U+FFFD).
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether a URI's (percent-decoded) value names this field: the same bytes once both are padded
    /// to the field's width.
    func matches(_ value: [UInt8]) -> Bool {
        guard value.count <= width else { return false }
        var end = value.endIndex
        while end > value.startIndex, value[end - 1] == 0x20 { end -= 1 }
        return value[..<end].elementsEqual(bytes)
    }
}
