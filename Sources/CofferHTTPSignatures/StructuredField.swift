import CofferCore
import RawStructuredFieldValues

/// Structured-field re-serialization for the `sf` and `key` parameters.
enum StructuredField {
    /// The most members, and parameters on one item, of a field a signature covers with `sf` or
    /// `key` (RFC 9651 asks parsers for at least 1,024 and 256; a covered field is checked before its
    /// signature is, so these bound what an unauthenticated request can make the parser do).
    static let maximumMembers = 256
    static let maximumParameters = 64

    /// Refuses a field with more than ``maximumMembers`` members or ``maximumParameters`` parameters
    /// on an item (``FieldScanner/extent(of:)``).
    static func checkExtent(_ value: String, component: HTTPSignatureComponent) throws(HTTPSignatureError) {
        let extent = FieldScanner.extent(of: value)
        guard extent.members <= maximumMembers, extent.parameters <= maximumParameters else {
            throw HTTPSignatureError(
                .invalidComponent,
                "\(component): the \(component.name) field has more than \(maximumMembers) members or \(maximumParameters) parameters on an item"
            )
        }
    }

    /// The serialized value of one dictionary member (an item or inner list, with its parameters).
    static func member(_ key: String, ofDictionary value: String, component: HTTPSignatureComponent) throws(HTTPSignatureError) -> String {
        try checkExtent(value, component: component)
        var parser = StructuredFieldValueParser(Array(value.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else {
            throw HTTPSignatureError(.invalidComponent, "\(component): the \(component.name) field is not a structured dictionary")
        }
        guard let member = dictionary[key] else {
            throw HTTPSignatureError(.missingComponent, "\(component) is covered but the \(component.name) field has no member '\(key)'")
        }
        var serializer = StructuredFieldValueSerializer()
        guard let bytes = try? serializer.writeListFieldValue([member]) else {
            throw HTTPSignatureError(.invalidComponent, "\(component): the member cannot be serialized")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The field value parsed and serialized again, as a dictionary, a list or an item — whichever
    /// parses first. Where two of them parse, their serializations are the same bytes.
    static func reserialized(_ value: String, component: HTTPSignatureComponent) throws(HTTPSignatureError) -> String {
        try checkExtent(value, component: component)
        let bytes = Array(value.utf8)
        var serializer = StructuredFieldValueSerializer()
        var dictionaryParser = StructuredFieldValueParser(bytes)
        if let dictionary = try? dictionaryParser.parseDictionaryFieldValue(), let out = try? serializer.writeDictionaryFieldValue(dictionary) {
            return String(decoding: out, as: UTF8.self)
        }
        var listParser = StructuredFieldValueParser(bytes)
        if let list = try? listParser.parseListFieldValue(), let out = try? serializer.writeListFieldValue(list) {
            return String(decoding: out, as: UTF8.self)
        }
        var itemParser = StructuredFieldValueParser(bytes)
        if let item = try? itemParser.parseItemFieldValue(), let out = try? serializer.writeItemFieldValue(item) {
            return String(decoding: out, as: UTF8.self)
        }
        throw HTTPSignatureError(.invalidComponent, "\(component): the \(component.name) field is not a structured field")
    }
}
