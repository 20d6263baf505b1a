import CPKCS11
import CofferCore
public import CofferCrypto

/// How a URI selects a key: on the one token it selects, the objects whose label and id it names.
/// Two keys that match are refused, and where the public halves show it (anyone may read them), before
/// the PIN is sent.
extension PKCS11Module {
    /// The private key a `pkcs11:` URI names, in a session logged in with `pin`: how an app opens a key
    /// the keychain keeps a reference to (`storedSigningKey(tag:)`).
    ///
    /// The token is selected by ``slot(matching:)`` before anything is sent to it. On that token the
    /// public keys with the URI's `object` and `id` are looked at first, without logging in; two of
    /// them are two keys, and the URI is refused before the PIN is sent. Then the session logs in and
    /// exactly one private key must match.
    /// - Throws: ``PKCS11Error`` `.malformedURI` when the URI names no key (`object=` or `id=`);
    ///   `.keyNotFound` for a `type` other than `private` or when no key matches; `.ambiguousMatch` when
    ///   two tokens or two keys match; the errors of ``slot(matching:)`` and the login's.
    public func privateKey(_ uri: PKCS11URI, pin: [UInt8]?) throws(PKCS11Error) -> PKCS11PrivateKey {
        try privateKey(uri, in: try slot(matching: uri), pin: pin)
    }

    /// The private key `uri` names on the token in `slot`, which ``slot(matching:)`` selected for it
    /// (a caller that asks for the PIN between the two calls names the token in its prompt).
    /// - Throws: as ``privateKey(_:pin:)``; `.tokenNotFound` when `slot`'s token is not one the URI names.
    public func privateKey(_ uri: PKCS11URI, in slot: PKCS11Slot, pin: [UInt8]?) throws(PKCS11Error) -> PKCS11PrivateKey {
        guard uri.type == nil || uri.type == "private" else {
            throw PKCS11Error(.keyNotFound, "the URI names a \(uri.type ?? "") object; signing needs a private key (type=private)")
        }
        guard uri.object != nil || uri.id != nil else { throw PKCS11Error(.malformedURI, "the URI names no key (object=… or id=…)") }
        let differences = differences(between: uri, and: slot)
        guard differences.isEmpty else {
            throw PKCS11Error(.tokenNotFound, "\(Self.describe(slot)) is not the token the URI names: it has \(differences.joined(separator: " and "))")
        }
        let session = try openSession(slot: slot, pin: nil)
        // Before the PIN: the public halves, which anyone with the token may read.
        _ = try session.theOnlyObject(class: CKO_PUBLIC_KEY, named: uri)
        if let pin { try session.logIn(pin: pin, as: CK_USER_TYPE(CKU_USER)) }
        guard let handle = try session.theOnlyObject(class: CKO_PRIVATE_KEY, named: uri) else {
            throw PKCS11Error(.keyNotFound, "no private key matches \(Self.quote(uri.keyPart)) on token \(Self.describe(slot))")
        }
        return try session.privateKey(handle: handle)
    }

    /// The public half of the key pair a URI names, read without logging in (public objects are
    /// readable by anyone with the token), and the URI that names that key pair exactly: the token's
    /// label, manufacturer, model and serial, the key's label and id, `type=private`.
    /// - Throws: ``PKCS11Error``: the errors of ``slot(matching:)``; `.malformedURI` when the URI names
    ///   no key; `.keyNotFound` when no public key matches; `.ambiguousMatch` when two do.
    public func publicKey(_ uri: PKCS11URI) throws(PKCS11Error) -> PKCS11PublicKey {
        guard uri.type == nil || uri.type == "private" || uri.type == "public" else {
            throw PKCS11Error(.keyNotFound, "the URI names a \(uri.type ?? "") object, not a key pair")
        }
        guard uri.object != nil || uri.id != nil else { throw PKCS11Error(.malformedURI, "the URI names no key (object=… or id=…)") }
        let session = try openSession(slot: try slot(matching: uri), pin: nil)
        guard let handle = try session.theOnlyObject(class: CKO_PUBLIC_KEY, named: uri) else {
            throw PKCS11Error(.keyNotFound, "no public key matches \(Self.quote(uri.keyPart)) on token \(Self.describe(session.slot))")
        }
        // Read as a private key's public half is (the same object serves both); its URI is the pair's.
        let pair = try session.privateKey(handle: handle)
        return PKCS11PublicKey(uri: pair.uri, verifyingKey: pair.publicKey, type: pair.type)
    }
}

/// The public half of a key pair on a token, and the URI that names the pair exactly.
public struct PKCS11PublicKey: Sendable {
    /// The URI of the pair's private key: the token's label, manufacturer, model and serial, the key's
    /// label and id, `type=private`.
    public let uri: PKCS11URI
    /// The public key, as Coffer's verifying key (its fingerprint, key id, SPKI).
    public let verifyingKey: VerifyingKey
    /// The key's type.
    public let type: PKCS11KeyType
}

extension PKCS11Session {
    /// The one object of `objectClass` with the URI's label and id; nil when there is none.
    /// - Throws: ``PKCS11Error`` `.ambiguousMatch` naming each object's label and id when several match.
    func theOnlyObject(class objectClass: UInt, named uri: PKCS11URI) throws(PKCS11Error) -> CK_OBJECT_HANDLE? {
        let found = try findObjects(class: objectClass, label: uri.object, id: uri.id)
        guard found.count <= 1 else {
            var named: [String] = []
            for object in found {
                let label = try attribute(CKA_LABEL, of: object).map { String(decoding: $0, as: UTF8.self) } ?? ""
                let id = try attribute(CKA_ID, of: object) ?? []
                named.append("'\(label)' (id=\(id.map { "%" + Hex.encode([$0]).uppercased() }.joined()))")
            }
            let kind = objectClass == CKO_PUBLIC_KEY ? "public keys" : "private keys"
            let apart = Set(named).count == named.count ? (uri.id == nil ? "add id=… to name one" : "add object=… to name one") : "nothing in a URI tells them apart"
            throw PKCS11Error(
                .ambiguousMatch,
                "\(found.count) \(kind) on token \(PKCS11Module.describe(slot)) match \(PKCS11Module.quote(uri.keyPart)), so none is used\(objectClass == CKO_PUBLIC_KEY ? " and no PIN is sent" : ""): \(named.joined(separator: ", ")); \(apart)"
            )
        }
        return found.first
    }
}

extension PKCS11URI {
    /// The URI's `object` and `id` alone, for messages.
    var keyPart: PKCS11URI { PKCS11URI(object: object, id: id) }
}
