/// The labels that begin every message Coffer signs for a purpose of its own (docs/SECURITY.md, "One
/// signature, one meaning"): a signature file's `coffer-signature-v1`, a keychain export's
/// `coffer-keychain-export v2`, each ended by a zero byte. Two purposes never share a label, so a
/// signature made for one never verifies for another; and a key's signature over bytes that begin with a
/// label is made only by that purpose's own writer: signing bytes of that shape as a plain message
/// (``SigningKey/signature(for:options:)-(Message,_)``, `coffer sign --raw`) is refused, so that no one can have a
/// key sign a document of their choosing that then passes for a Coffer export or signature file.
///
/// A label has one shape, reserved for labels to come as well: the ASCII bytes `coffer-`, then printable
/// ASCII, then a zero byte, within the first ``maximumLength`` bytes.
public enum SigningLabel {
    /// The most bytes a label takes, its zero byte included.
    public static let maximumLength = 64

    /// The label `message` begins with, when it begins with one of Coffer's (the shape above); nil
    /// otherwise. Reads at most the first ``maximumLength`` bytes.
    public static func label<Bytes: Sequence>(beginning message: Bytes) -> String? where Bytes.Element == UInt8 {
        let start = Array(message.prefix(maximumLength))
        let marker = Array("coffer-".utf8)
        guard start.starts(with: marker), let end = start.firstIndex(of: 0) else { return nil }
        let text = start[..<end]
        guard text.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: text, as: UTF8.self)
    }
}
