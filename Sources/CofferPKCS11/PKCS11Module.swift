import CPKCS11
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A token's PKCS #11 module (SoftHSM2, OpenSC for PIV cards and YubiKeys, an HSM vendor's library),
/// loaded with `dlopen` and initialised once per process.
///
/// ```swift
/// let module = try PKCS11Module.load("/usr/lib/softhsm/libsofthsm2.so")
/// let session = try module.openSession(tokenLabel: "release", pin: pin)
/// let key = try session.generateKeyPair(.p256, label: "release-2026")
/// let signature = try key.sign(Array("hello".utf8))
/// ```
///
/// The same path always gives the same instance: a module is initialised once (`C_Initialize` with
/// OS locking, so its sessions may be used from any thread) and stays loaded for the process.
public final class PKCS11Module: @unchecked Sendable {
    /// The module file as given.
    public let path: String
    /// What the module says of itself (`C_GetInfo`), read once when it is loaded.
    public let library: PKCS11LibraryInfo
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// Serialises calls into the module, which PKCS #11 lets be used from several threads only with
    /// its own locking; one lock per module keeps every module safe.
    let lock = NSLock()

    nonisolated(unsafe) private static var loaded: [String: PKCS11Module] = [:]
    private static let loadLock = NSLock()

    private init(path: String, library: PKCS11LibraryInfo, functions: UnsafeMutablePointer<CK_FUNCTION_LIST>) {
        self.path = path
        self.library = library
        self.functions = functions
    }

    /// Loads and initialises the module at `path` (once per process; later calls return the same one).
    /// - Throws: ``PKCS11Error`` `.moduleNotLoaded` when the file cannot be loaded or is not a PKCS #11
    ///   module, `.moduleFailure` naming `C_Initialize` when it refuses to start.
    public static func load(_ path: String) throws(PKCS11Error) -> PKCS11Module {
        loadLock.lock()
        defer { loadLock.unlock() }
        if let module = loaded[path] { return module }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw PKCS11Error(.moduleNotLoaded, "cannot load the PKCS #11 module '\(path)': \(reason)")
        }
        guard let symbol = dlsym(handle, "C_GetFunctionList") else {
            dlclose(handle)
            throw PKCS11Error(.moduleNotLoaded, "'\(path)' is not a PKCS #11 module (it has no C_GetFunctionList)")
        }
        typealias GetFunctionList = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<CK_FUNCTION_LIST>?>?) -> CK_RV
        let getFunctionList = unsafeBitCast(symbol, to: GetFunctionList.self)
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
        let got = getFunctionList(&list)
        guard got == CKR_OK, let list else { throw PKCS11Error.failed("C_GetFunctionList", got) }
        guard let initialize = list.pointee.C_Initialize else {
            throw PKCS11Error(.moduleNotLoaded, "'\(path)' has no C_Initialize")
        }
        var arguments = CK_C_INITIALIZE_ARGS()
        arguments.flags = CKF_OS_LOCKING_OK
        let initialized = withUnsafeMutablePointer(to: &arguments) { initialize(UnsafeMutableRawPointer($0)) }
        // Another part of the process (a second path spelling of the same file) may have started it.
        guard initialized == CKR_OK || initialized == CKR_CRYPTOKI_ALREADY_INITIALIZED else {
            throw PKCS11Error.failed("C_Initialize", initialized)
        }
        var info = CK_INFO()
        let described = list.pointee.C_GetInfo?(&info) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        guard described == CKR_OK else { throw PKCS11Error.failed("C_GetInfo", described) }
        let module = PKCS11Module(path: path, library: PKCS11LibraryInfo(info), functions: list)
        loaded[path] = module
        return module
    }

    /// Calls into the module under its lock and turns a failing return value into an error.
    func call(_ function: String, token: String? = nil, _ body: (CK_FUNCTION_LIST) -> CK_RV?) throws(PKCS11Error) {
        lock.lock()
        let value = body(functions.pointee)
        lock.unlock()
        guard let value else { throw PKCS11Error(.moduleFailure, "the module '\(path)' does not implement \(function)", function: function) }
        guard value == CKR_OK else { throw PKCS11Error.failed(function, value, token: token) }
    }

    // MARK: - Slots and tokens

    /// The slots with a token in them (or all slots), with what their tokens say of themselves.
    public func slots(withTokenOnly: Bool = true) throws(PKCS11Error) -> [PKCS11Slot] {
        var count: CK_ULONG = 0
        try call("C_GetSlotList") { $0.C_GetSlotList?(withTokenOnly ? CK_BBOOL(CK_TRUE) : CK_BBOOL(CK_FALSE), nil, &count) }
        var identifiers = [CK_SLOT_ID](repeating: 0, count: Int(count))
        try call("C_GetSlotList") { list in identifiers.withUnsafeMutableBufferPointer { list.C_GetSlotList?(withTokenOnly ? CK_BBOOL(CK_TRUE) : CK_BBOOL(CK_FALSE), $0.baseAddress, &count) } }
        var slots: [PKCS11Slot] = []
        for identifier in identifiers.prefix(Int(count)) {
            var slotInfo = CK_SLOT_INFO()
            try call("C_GetSlotInfo") { $0.C_GetSlotInfo?(identifier, &slotInfo) }
            var token: PKCS11Token?
            if slotInfo.flags & CKF_TOKEN_PRESENT != 0 {
                var tokenInfo = CK_TOKEN_INFO()
                try call("C_GetTokenInfo") { $0.C_GetTokenInfo?(identifier, &tokenInfo) }
                token = PKCS11Token(tokenInfo)
            }
            slots.append(PKCS11Slot(identifier: UInt(identifier), info: slotInfo, token: token))
        }
        return slots
    }

    /// The slot whose token has this label: ``slot(matching:)`` for `pkcs11:token=LABEL`.
    /// - Throws: ``PKCS11Error`` `.tokenNotFound`, listing the tokens there are; `.ambiguousMatch` when
    ///   two tokens have the label (name one by its serial with ``slot(matching:)``).
    public func slot(tokenLabel label: String) throws(PKCS11Error) -> PKCS11Slot {
        try slot(matching: PKCS11URI(token: label))
    }

    /// Initialises the token in `slot` (erasing it), names it `label`, and sets the security officer's
    /// and the user's PINs: what `softhsm2-util --init-token` and `pkcs11-tool --init-token --init-pin` do.
    ///
    /// The PINs go to that token alone, even when other tokens have the same label: the token is found
    /// again afterwards (a module may move it to another slot id) as the one with the label whose serial
    /// no other slot had before.
    /// - Returns: the slot the initialised token is in now.
    /// - Throws: ``PKCS11Error`` `.unsupported` for a label longer than the token's 32-byte field;
    ///   `.tokenNotFound` or `.ambiguousMatch` when the token cannot be told apart afterwards (no PIN
    ///   is then sent); the module's failures.
    @discardableResult
    public func initializeToken(slot: PKCS11Slot, label: String, securityOfficerPIN: [UInt8], userPIN: [UInt8]) throws(PKCS11Error) -> PKCS11Slot {
        guard label.utf8.count <= 32 else { throw PKCS11Error(.unsupported, "a token's label is at most 32 bytes; '\(label)' is \(label.utf8.count)") }
        var padded = [CK_UTF8CHAR](repeating: 0x20, count: 32)
        for (index, byte) in label.utf8.enumerated() { padded[index] = byte }
        let others = Set(try slots().compactMap { $0.identifier == slot.identifier ? nil : $0.token?.serialField })
        var soPIN = securityOfficerPIN
        defer { for index in soPIN.indices { soPIN[index] = 0 } }
        try call("C_InitToken", token: label) { list in
            soPIN.withUnsafeMutableBufferPointer { pin in padded.withUnsafeMutableBufferPointer { list.C_InitToken?(CK_SLOT_ID(slot.identifier), pin.baseAddress, CK_ULONG(pin.count), $0.baseAddress) } }
        }
        let initialized = try slots().filter { found in
            guard let token = found.token, token.isInitialized, token.labelField.matches(Array(label.utf8)) else { return false }
            return !others.contains(token.serialField)
        }
        guard initialized.count == 1, let token = initialized.first else {
            throw PKCS11Error(
                initialized.isEmpty ? .tokenNotFound : .ambiguousMatch,
                "after C_InitToken, \(initialized.count) tokens labelled '\(label)' are new in '\(path)'; no PIN was set"
            )
        }
        let session = try openSession(slot: token, pin: nil)
        try session.logIn(pin: securityOfficerPIN, as: CK_USER_TYPE(CKU_SO))
        var user = userPIN
        defer { for index in user.indices { user[index] = 0 } }
        try call("C_InitPIN", token: label) { list in user.withUnsafeMutableBufferPointer { list.C_InitPIN?(session.handle, $0.baseAddress, CK_ULONG($0.count)) } }
        return token
    }

    /// Opens a read-write session with the token in `slot`, logged in with `pin` when one is given.
    public func openSession(slot: PKCS11Slot, pin: [UInt8]?) throws(PKCS11Error) -> PKCS11Session {
        var handle: CK_SESSION_HANDLE = 0
        try call("C_OpenSession", token: slot.token?.label) { $0.C_OpenSession?(CK_SLOT_ID(slot.identifier), CK_FLAGS(CKF_SERIAL_SESSION | CKF_RW_SESSION), nil, nil, &handle) }
        let session = PKCS11Session(module: self, handle: handle, slot: slot)
        if let pin { try session.logIn(pin: pin, as: CK_USER_TYPE(CKU_USER)) }
        return session
    }

    /// Opens a session with the token labelled `tokenLabel`, logged in with `pin`; refused, before the
    /// PIN is sent, when two tokens have the label (see ``slot(tokenLabel:)``).
    public func openSession(tokenLabel: String, pin: [UInt8]?) throws(PKCS11Error) -> PKCS11Session {
        try openSession(slot: try slot(tokenLabel: tokenLabel), pin: pin)
    }
}
