import CPKCS11

/// How a URI selects a token: every token, slot and module attribute it has is compared with what the
/// module and its slots say, and exactly one initialised token must match before a session is opened
/// or a PIN sent. Two that match are refused, naming them and what would tell them apart.
extension PKCS11Module {
    /// The one slot whose token the URI names.
    ///
    /// Every token, slot and module attribute of `uri` must match (RFC 7512's text fields compared as
    /// padded to their width, exactly, byte for byte); attributes it does not have match anything.
    /// Only initialised tokens are candidates. Nothing is sent to any token: no session is opened and
    /// no PIN is asked for until one token is selected.
    /// - Throws: ``PKCS11Error`` `.tokenNotFound` naming, for each token there is, the attribute that
    ///   differs; `.ambiguousMatch` when two or more tokens match, naming them (label, serial, slot) and
    ///   the attribute that would tell them apart.
    public func slot(matching uri: PKCS11URI) throws(PKCS11Error) -> PKCS11Slot {
        let candidates = try slots().filter { $0.token?.isInitialized == true }
        let matching = candidates.filter { differences(between: uri, and: $0).isEmpty }
        guard matching.count <= 1 else {
            let named = matching.map(Self.describe).joined(separator: ", ")
            throw PKCS11Error(
                .ambiguousMatch,
                "\(matching.count) tokens match \(Self.quote(uri.tokenPart)), so none is used and no PIN is sent: \(named); \(Self.whatTellsApart(matching))"
            )
        }
        guard let slot = matching.first else {
            let found = candidates.map { "\(Self.describe($0)) has \(differences(between: uri, and: $0).joined(separator: " and "))" }
            throw PKCS11Error(
                .tokenNotFound,
                "no token in '\(path)' matches \(Self.quote(uri.tokenPart))" + (found.isEmpty ? " (it has no initialised token)" : ": " + found.joined(separator: "; "))
            )
        }
        return slot
    }

    /// The token, slot and module attributes of `uri` that `slot` does not match, each as
    /// "serial 'X', not 'Y'"; empty when it matches.
    func differences(between uri: PKCS11URI, and slot: PKCS11Slot) -> [String] {
        guard let token = slot.token else { return ["no token"] }
        let fields: [(String, String?, PaddedField)] = [
            ("token", uri.token, token.labelField), ("manufacturer", uri.manufacturer, token.manufacturerField),
            ("model", uri.model, token.modelField), ("serial", uri.serial, token.serialField),
            ("slot-description", uri.slotDescription, slot.descriptionField), ("slot-manufacturer", uri.slotManufacturer, slot.manufacturerField),
            ("library-manufacturer", uri.libraryManufacturer, library.manufacturerField),
            ("library-description", uri.libraryDescription, library.descriptionField),
        ]
        var differences = fields.compactMap { name, wanted, field -> String? in
            guard let wanted, !field.matches(Array(wanted.utf8)) else { return nil }
            return "\(name) '\(field.text)', not '\(wanted)'"
        }
        if let wanted = uri.slotID, wanted != slot.identifier { differences.append("slot-id \(slot.identifier), not \(wanted)") }
        if let wanted = uri.libraryVersion, wanted != library.version { differences.append("library-version \(library.version), not \(wanted)") }
        return differences
    }

    /// `'release' (serial d9d99d8799fe0a55, slot 436079189)`.
    static func describe(_ slot: PKCS11Slot) -> String {
        "'\(slot.token?.label ?? "")' (serial \(slot.token?.serialNumber ?? ""), slot \(slot.identifier))"
    }

    /// The URI's attributes as written, without the scheme: `token=release;serial=…`.
    static func quote(_ uri: PKCS11URI) -> String {
        let text = String(uri.description.dropFirst("pkcs11:".count))
        return text.isEmpty ? "a URI that names no token" : text
    }

    /// The first attribute whose values differ between every two of `slots`, for the refusal's advice.
    static func whatTellsApart(_ slots: [PKCS11Slot]) -> String {
        let attributes: [(String, (PKCS11Slot) -> String)] = [
            ("serial", { $0.token?.serialNumber ?? "" }), ("token", { $0.token?.label ?? "" }), ("model", { $0.token?.model ?? "" }),
            ("manufacturer", { $0.token?.manufacturer ?? "" }), ("slot-description", { $0.description }),
        ]
        for (name, value) in attributes where Set(slots.map(value)).count == slots.count {
            return "add \(name)=… to name one"
        }
        return "they say the same of themselves, and only their slot ids (which last only while the module is loaded) differ: remove the token you do not mean"
    }
}
