import CPKCS11
import CofferCore
public import CofferCrypto
import Crypto
import _CryptoExtras

/// The key types Coffer makes and uses on a token.
public enum PKCS11KeyType: Sendable, Hashable, CustomStringConvertible {
    /// ECDSA on P-256.
    case p256
    /// ECDSA on P-384.
    case p384
    /// RSA with a modulus of this many bits (2048, 3072 or 4096).
    case rsa(bits: Int)
    /// Ed25519 (`CKK_EC_EDWARDS`, signing with `CKM_EDDSA`), on tokens that support it (PKCS #11 3.0;
    /// SoftHSM2 2.6, YubiHSM, recent OpenSC cards).
    case ed25519

    public var description: String {
        switch self {
        case .p256: "P-256"
        case .p384: "P-384"
        case .rsa(let bits): "RSA-\(bits)"
        case .ed25519: "Ed25519"
        }
    }

    /// The DER-encoded curve a token takes as `CKA_EC_PARAMS`: the named curve's OID (for Ed25519,
    /// id-Ed25519, RFC 8410).
    var curveParameters: [UInt8]? {
        switch self {
        case .p256: [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        case .p384: [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
        case .ed25519: [0x06, 0x03, 0x2B, 0x65, 0x70]
        case .rsa: nil
        }
    }

    /// Whether `CKA_EC_PARAMS` names Ed25519: its OID, or the curve name as a PrintableString
    /// (`edwards25519`), which PKCS #11 3.0 also allows and OpenSC writes.
    static func isEd25519(parameters: [UInt8]) -> Bool {
        parameters == PKCS11KeyType.ed25519.curveParameters || parameters == [0x13, 0x0C] + Array("edwards25519".utf8)
    }
}

/// A session with one token: log in, find keys, make keys. Sessions are safe to share between threads
/// (every call takes the module's lock); closing happens when the last reference goes.
public final class PKCS11Session: @unchecked Sendable {
    /// The module the session belongs to.
    public let module: PKCS11Module
    /// The slot the session was opened with, and what its token said of itself then.
    public let slot: PKCS11Slot
    /// The token's label, for messages.
    public var tokenLabel: String { slot.token?.label ?? "in slot \(slot.identifier)" }
    let handle: CK_SESSION_HANDLE

    init(module: PKCS11Module, handle: CK_SESSION_HANDLE, slot: PKCS11Slot) {
        self.module = module
        self.handle = handle
        self.slot = slot
    }

    deinit {
        module.lock.lock()
        _ = module.functions.pointee.C_CloseSession?(handle)
        module.lock.unlock()
    }

    func call(_ function: String, _ body: (CK_FUNCTION_LIST) -> CK_RV?) throws(PKCS11Error) {
        try module.call(function, token: tokenLabel, body)
    }

    /// Logs in; already being logged in (the token's login is per application, not per session) is fine.
    /// - Throws: ``PKCS11Error`` `.pinIncorrect` naming `C_Login` and the token.
    func logIn(pin: [UInt8], as user: CK_USER_TYPE) throws(PKCS11Error) {
        var pin = pin
        defer { for index in pin.indices { pin[index] = 0 } }
        do {
            try call("C_Login") { list in pin.withUnsafeMutableBufferPointer { list.C_Login?(handle, user, $0.baseAddress, CK_ULONG($0.count)) } }
        } catch where error.returnValue == CKR_USER_ALREADY_LOGGED_IN {
            return
        }
    }

    // MARK: - Keys

    /// Generates a key pair on the token whose private key is **sensitive and not extractable**: it can
    /// sign (and, for EC keys, derive) but never be read out. Both halves carry `label` and `id` (a random
    /// 16-byte id when none is given), as `pkcs11-tool` and `p11tool` expect.
    public func generateKeyPair(_ type: PKCS11KeyType, label: String, id: [UInt8]? = nil) throws(PKCS11Error) -> PKCS11PrivateKey {
        try generateKeyPair(type, label: label, id: id, allowingSigning: true)
    }

    /// The same; `allowingSigning: false` makes a key without `CKA_SIGN` (for tests of that refusal).
    func generateKeyPair(_ type: PKCS11KeyType, label: String, id: [UInt8]?, allowingSigning: Bool) throws(PKCS11Error) -> PKCS11PrivateKey {
        let id = id ?? ((try? SecureRandom.bytes(count: 16)) ?? Array(label.utf8.prefix(16)))
        var publicTemplate = AttributeTemplate()
        var privateTemplate = AttributeTemplate()
        publicTemplate.add(CKA_TOKEN, true)
        publicTemplate.add(CKA_VERIFY, true)
        publicTemplate.add(CKA_LABEL, Array(label.utf8))
        publicTemplate.add(CKA_ID, id)
        privateTemplate.add(CKA_TOKEN, true)
        privateTemplate.add(CKA_PRIVATE, true)
        privateTemplate.add(CKA_SENSITIVE, true)
        privateTemplate.add(CKA_EXTRACTABLE, false)
        privateTemplate.add(CKA_SIGN, allowingSigning)
        privateTemplate.add(CKA_LABEL, Array(label.utf8))
        privateTemplate.add(CKA_ID, id)
        let mechanismType: CK_MECHANISM_TYPE
        switch type {
        case .p256, .p384:
            mechanismType = CK_MECHANISM_TYPE(CKM_EC_KEY_PAIR_GEN)
            publicTemplate.add(CKA_EC_PARAMS, type.curveParameters ?? [])
            privateTemplate.add(CKA_DERIVE, true)
        case .ed25519:
            mechanismType = CK_MECHANISM_TYPE(CKM_EC_EDWARDS_KEY_PAIR_GEN)
            publicTemplate.add(CKA_EC_PARAMS, type.curveParameters ?? [])
        case .rsa(let bits):
            guard [2048, 3072, 4096].contains(bits) else {
                throw PKCS11Error(.unsupported, "RSA keys are 2048, 3072 or 4096 bits; \(bits) was asked")
            }
            mechanismType = CK_MECHANISM_TYPE(CKM_RSA_PKCS_KEY_PAIR_GEN)
            publicTemplate.add(CKA_MODULUS_BITS, UInt(bits))
            publicTemplate.add(CKA_PUBLIC_EXPONENT, [0x01, 0x00, 0x01])
        }
        var mechanism = CK_MECHANISM(mechanism: mechanismType, pParameter: nil, ulParameterLen: 0)
        var publicHandle: CK_OBJECT_HANDLE = 0
        var privateHandle: CK_OBJECT_HANDLE = 0
        try publicTemplate.withAttributes { publicAttributes throws(PKCS11Error) in
            try privateTemplate.withAttributes { privateAttributes throws(PKCS11Error) in
                try call("C_GenerateKeyPair") { list in
                    list.C_GenerateKeyPair?(
                        handle, &mechanism, publicAttributes.baseAddress, CK_ULONG(publicAttributes.count),
                        privateAttributes.baseAddress, CK_ULONG(privateAttributes.count), &publicHandle, &privateHandle
                    )
                }
            }
        }
        return try privateKey(handle: privateHandle)
    }

    /// The private keys on the token with this label and/or id (all private keys when both are nil).
    public func privateKeys(label: String? = nil, id: [UInt8]? = nil) throws(PKCS11Error) -> [PKCS11PrivateKey] {
        try findObjects(class: CKO_PRIVATE_KEY, label: label, id: id).map { handle throws(PKCS11Error) in try privateKey(handle: handle) }
    }

    /// The one private key with this label (and id, when given).
    /// - Throws: ``PKCS11Error`` `.keyNotFound` when there is none; `.ambiguousMatch` when several
    ///   match, naming each one's label and id.
    public func privateKey(label: String?, id: [UInt8]? = nil) throws(PKCS11Error) -> PKCS11PrivateKey {
        guard let handle = try theOnlyObject(class: CKO_PRIVATE_KEY, named: PKCS11URI(object: label, id: id)) else {
            throw PKCS11Error(.keyNotFound, "no private key\(label.map { " labelled '\($0)'" } ?? "")\(id.map { " with id \(Hex.encode($0))" } ?? "") on token '\(tokenLabel)'")
        }
        return try privateKey(handle: handle)
    }

    func findObjects(class objectClass: UInt, label: String?, id: [UInt8]?) throws(PKCS11Error) -> [CK_OBJECT_HANDLE] {
        var template = AttributeTemplate()
        template.add(CKA_CLASS, objectClass)
        if let label { template.add(CKA_LABEL, Array(label.utf8)) }
        if let id { template.add(CKA_ID, id) }
        // One find operation at a time per session: the module's lock covers the three calls.
        module.lock.lock()
        defer { module.lock.unlock() }
        let list = module.functions.pointee
        var found: [CK_OBJECT_HANDLE] = []
        let started = template.withAttributesUnchecked { list.C_FindObjectsInit?(handle, $0.baseAddress, CK_ULONG($0.count)) } ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        guard started == CKR_OK else { throw PKCS11Error.failed("C_FindObjectsInit", started, token: tokenLabel) }
        defer { _ = list.C_FindObjectsFinal?(handle) }
        var batch = [CK_OBJECT_HANDLE](repeating: 0, count: 16)
        while true {
            var count: CK_ULONG = 0
            let value = batch.withUnsafeMutableBufferPointer { list.C_FindObjects?(handle, $0.baseAddress, CK_ULONG($0.count), &count) } ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
            guard value == CKR_OK else { throw PKCS11Error.failed("C_FindObjects", value, token: tokenLabel) }
            if count == 0 { break }
            found += batch.prefix(Int(count))
        }
        return found
    }

    /// An attribute's bytes; nil when the object does not have it (or it is sensitive).
    func attribute(_ type: UInt, of object: CK_OBJECT_HANDLE) throws(PKCS11Error) -> [UInt8]? {
        var attribute = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(type), pValue: nil, ulValueLen: 0)
        module.lock.lock()
        defer { module.lock.unlock() }
        let list = module.functions.pointee
        let sized = list.C_GetAttributeValue?(handle, object, &attribute, 1) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        if sized == CKR_ATTRIBUTE_SENSITIVE || sized == CKR_ATTRIBUTE_TYPE_INVALID { return nil }
        guard sized == CKR_OK else { throw PKCS11Error.failed("C_GetAttributeValue", sized, token: tokenLabel) }
        guard attribute.ulValueLen != CK_ULONG.max else { return nil }
        var value = [UInt8](repeating: 0, count: Int(attribute.ulValueLen))
        let read = value.withUnsafeMutableBytes { bytes -> CK_RV in
            attribute.pValue = bytes.baseAddress
            return list.C_GetAttributeValue?(handle, object, &attribute, 1) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
        }
        guard read == CKR_OK else { throw PKCS11Error.failed("C_GetAttributeValue", read, token: tokenLabel) }
        return value
    }

    func boolAttribute(_ type: UInt, of object: CK_OBJECT_HANDLE) throws(PKCS11Error) -> Bool? {
        try attribute(type, of: object).map { $0.first.map { $0 != 0 } ?? false }
    }

    func privateKey(handle object: CK_OBJECT_HANDLE) throws(PKCS11Error) -> PKCS11PrivateKey {
        let label = try attribute(CKA_LABEL, of: object).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let id = try attribute(CKA_ID, of: object) ?? []
        guard let typeBytes = try attribute(CKA_KEY_TYPE, of: object), let keyType = Self.unsigned(typeBytes) else {
            throw PKCS11Error(.unsupported, "the key '\(label)' on token '\(tokenLabel)' has no key type")
        }
        // The public half: the public-key object with the same id (a private key object need not carry
        // its point or modulus); of several with the id, the one with the same label too, or none.
        var publicObjects = try findObjects(class: CKO_PUBLIC_KEY, label: nil, id: id)
        if publicObjects.count > 1 { publicObjects = try findObjects(class: CKO_PUBLIC_KEY, label: label, id: id) }
        guard publicObjects.count <= 1 else {
            throw PKCS11Error(.ambiguousMatch, "\(publicObjects.count) public keys on token '\(tokenLabel)' have the label '\(label)' and id \(Hex.encode(id)); which is the key's public half is not known")
        }
        let publicObject = publicObjects.first
        let verifyingKey: VerifyingKey
        let type: PKCS11KeyType
        do {
            switch keyType {
            case CKK_EC:
                guard let publicObject, let point = try attribute(CKA_EC_POINT, of: publicObject), let parameters = try attribute(CKA_EC_PARAMS, of: publicObject) else {
                    throw PKCS11Error(.keyNotFound, "the EC key '\(label)' on token '\(tokenLabel)' has no public key object with its id")
                }
                let raw = Self.unwrapOctetString(point)
                if parameters == PKCS11KeyType.p256.curveParameters {
                    (type, verifyingKey) = (.p256, try VerifyingKey(.p256(P256.Signing.PublicKey(x963Representation: raw))))
                } else if parameters == PKCS11KeyType.p384.curveParameters {
                    (type, verifyingKey) = (.p384, try VerifyingKey(.p384(P384.Signing.PublicKey(x963Representation: raw))))
                } else {
                    throw PKCS11Error(.unsupported, "the EC key '\(label)' is on a curve Coffer does not use (P-256 and P-384 are)")
                }
            case CKK_EC_EDWARDS:
                guard let publicObject, let point = try attribute(CKA_EC_POINT, of: publicObject), let parameters = try attribute(CKA_EC_PARAMS, of: publicObject) else {
                    throw PKCS11Error(.keyNotFound, "the Edwards-curve key '\(label)' on token '\(tokenLabel)' has no public key object with its id")
                }
                guard PKCS11KeyType.isEd25519(parameters: parameters) else {
                    throw PKCS11Error(.unsupported, "the Edwards-curve key '\(label)' is not Ed25519 (Ed448 is not used by Coffer)")
                }
                // A 32-byte key, bare or (as PKCS #11 3.0 says) in a DER OCTET STRING.
                let raw = point.count == 34 && point[0] == 0x04 && point[1] == 0x20 ? Array(point[2...]) : point
                (type, verifyingKey) = (.ed25519, try VerifyingKey(.ed25519(Curve25519.Signing.PublicKey(rawRepresentation: raw))))
            case CKK_RSA:
                let source = publicObject ?? object
                guard let modulus = try attribute(CKA_MODULUS, of: source), let exponent = try attribute(CKA_PUBLIC_EXPONENT, of: source) else {
                    throw PKCS11Error(.keyNotFound, "the RSA key '\(label)' on token '\(tokenLabel)' shows no modulus")
                }
                let publicKey = try _RSA.Signing.PublicKey(n: modulus, e: exponent)
                type = .rsa(bits: publicKey.keySizeInBits)
                verifyingKey = try VerifyingKey(.rsa(publicKey))
            default:
                throw PKCS11Error(.unsupported, "the key '\(label)' on token '\(tokenLabel)' is of a type Coffer does not use (CKK 0x\(String(keyType, radix: 16)))")
            }
        } catch let error as PKCS11Error {
            throw error
        } catch {
            throw PKCS11Error(.unsupported, "the public key of '\(label)' on token '\(tokenLabel)' cannot be read", underlying: error)
        }
        return PKCS11PrivateKey(session: self, handle: object, label: label, id: id, type: type, publicKey: verifyingKey)
    }

    /// The public key of a key pair on the token, read from its public-key object by label and/or id:
    /// no login needed (public objects are readable by anyone with the token).
    /// - Throws: ``PKCS11Error`` `.keyNotFound` when no public key matches; `.ambiguousMatch` when
    ///   several do.
    public func publicKey(label: String?, id: [UInt8]? = nil) throws(PKCS11Error) -> VerifyingKey {
        guard let object = try theOnlyObject(class: CKO_PUBLIC_KEY, named: PKCS11URI(object: label, id: id)) else {
            throw PKCS11Error(.keyNotFound, "no public key\(label.map { " labelled '\($0)'" } ?? "")\(id.map { " with id \(Hex.encode($0))" } ?? "") on token '\(tokenLabel)'")
        }
        // Read as a private key's public half is: the same object serves both.
        return try privateKeyView(of: object).publicKey
    }

    /// The key-pair description of a public-key object (its handle stands in for the private key's).
    private func privateKeyView(of publicObject: CK_OBJECT_HANDLE) throws(PKCS11Error) -> PKCS11PrivateKey {
        try privateKey(handle: publicObject)
    }

    /// A `CK_ULONG` attribute's value, in the platform's byte order.
    static func unsigned(_ bytes: [UInt8]) -> UInt? {
        guard bytes.count == MemoryLayout<CK_ULONG>.size else { return nil }
        return bytes.withUnsafeBytes { UInt($0.loadUnaligned(as: CK_ULONG.self)) }
    }

    /// `CKA_EC_POINT` is a DER OCTET STRING around the point (some tokens give the bare point).
    static func unwrapOctetString(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count > 2, bytes[0] == 0x04 else { return bytes }
        if bytes[1] < 0x80, Int(bytes[1]) == bytes.count - 2 { return Array(bytes[2...]) }
        if bytes[1] == 0x81, bytes.count > 3, Int(bytes[2]) == bytes.count - 3 { return Array(bytes[3...]) }
        return bytes
    }
}
