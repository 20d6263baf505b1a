public import HTTPTypes
import CofferCore
import RawStructuredFieldValues

/// One signature of a message as its `Signature-Input` and `Signature` fields carry it (RFC 9421 §4):
/// its label, what it covers, its parameters, and the signature bytes.
public struct HTTPMessageSignature: Hashable, Sendable {
    /// The dictionary key that pairs the two fields' members (`sig1`).
    public var label: String
    /// The covered components, in order.
    public var components: [HTTPSignatureComponent]
    /// The signature parameters, in the order received.
    public var parameters: HTTPSignatureParameters
    /// The signature value.
    public var signature: [UInt8]

    /// A signature from its parts.
    public init(label: String, components: [HTTPSignatureComponent], parameters: HTTPSignatureParameters, signature: [UInt8]) {
        self.label = label
        self.components = components
        self.parameters = parameters
        self.signature = signature
    }
}

extension HTTPField.Name {
    /// `Signature-Input` (RFC 9421 §4.1).
    public static let signatureInput = HTTPField.Name("Signature-Input")!
    /// `Signature` (RFC 9421 §4.2).
    public static let signature = HTTPField.Name("Signature")!
    /// `Content-Digest` (RFC 9530 §2).
    public static let contentDigest = HTTPField.Name("Content-Digest")!
}

/// Reading and writing the `Signature-Input` and `Signature` fields.
public enum HTTPSignatureFields {
    /// The most signatures one message may carry; more are refused as malformed.
    public static let maximumSignatures = 16
    /// The most components one signature may cover.
    public static let maximumComponents = 64
    /// The largest signature value accepted, in bytes (an RSA-8192 signature is 1,024).
    public static let maximumSignatureBytes = 1024

    /// Every signature in a message's fields, in `Signature-Input` order; empty when the message has
    /// neither field.
    ///
    /// - Throws: ``HTTPSignatureError`` `.malformedSignature` when either field is not a structured
    ///   dictionary of the right shapes, a label is in one field but not the other, or a limit is
    ///   exceeded; `.invalidParameter` for an unknown or mistyped signature parameter.
    public static func signatures(in fields: HTTPFields) throws(HTTPSignatureError) -> [HTTPMessageSignature] {
        let input = try combinedValue(of: .signatureInput, in: fields)
        let signature = try combinedValue(of: .signature, in: fields)
        if input == nil && signature == nil { return [] }
        let (inputValue, signatureValue) = (input ?? "", signature ?? "")
        if let signatures = scannedSignatures(input: inputValue, signature: signatureValue) { return signatures }
        return try parsedSignatures(input: inputValue, signature: signatureValue)
    }

    /// A field's lines combined into one value (RFC 9110 §5.3), nil when the message has none, after
    /// ``checkExtent(_:field:members:)``.
    static func combinedValue(of name: HTTPField.Name, in fields: HTTPFields) throws(HTTPSignatureError) -> String? {
        guard let value = fields.combinedLines(of: name) else { return nil }
        try checkExtent(value, field: name.rawName, members: maximumSignatures)
        return value
    }

    /// ``signatures(in:)`` through swift-http-structured-headers' parser, which reads (or refuses, with
    /// its reasons) every field value.
    static func parsedSignatures(input: String, signature: String) throws(HTTPSignatureError) -> [HTTPMessageSignature] {
        let inputs = try dictionary(input, field: "Signature-Input")
        let values = try dictionary(signature, field: "Signature")
        guard inputs.count <= maximumSignatures else {
            throw HTTPSignatureError(.malformedSignature, "Signature-Input has \(inputs.count) signatures; at most \(maximumSignatures) are read")
        }
        guard inputs.count == values.count else {
            throw HTTPSignatureError(.malformedSignature, "Signature-Input has \(inputs.count) members but Signature has \(values.count)")
        }
        var result: [HTTPMessageSignature] = []
        for (label, input) in inputs {
            guard let value = values[label] else {
                throw HTTPSignatureError(.malformedSignature, "Signature-Input's '\(label)' has no member in Signature")
            }
            let (components, parameters) = try parseInput(input, label: label)
            result.append(HTTPMessageSignature(label: label, components: components, parameters: parameters, signature: try signatureBytes(value, label: label)))
        }
        return result
    }

    /// The two field values with `signature` added to the signatures `fields` already carries (other
    /// signers' members are kept as they were, re-serialized).
    /// - Throws: ``HTTPSignatureError`` `.malformedSignature` when the existing fields cannot be read or
    ///   already use `signature.label`.
    public static func adding(_ signature: HTTPMessageSignature, to fields: HTTPFields) throws(HTTPSignatureError) -> (signatureInput: String, signature: String) {
        var inputs = OrderedMap<String, ItemOrInnerList>(), values = OrderedMap<String, ItemOrInnerList>()
        if let value = try combinedValue(of: .signatureInput, in: fields) { inputs = try dictionary(value, field: "Signature-Input") }
        if let value = try combinedValue(of: .signature, in: fields) { values = try dictionary(value, field: "Signature") }
        guard inputs[signature.label] == nil, values[signature.label] == nil else {
            throw HTTPSignatureError(.malformedSignature, "the message already has a signature labelled '\(signature.label)'")
        }
        inputs[signature.label] = .innerList(HTTPSignatureBase.innerList(signature.components, signature.parameters))
        values[signature.label] = .item(Item(bareItem: RFC9651BareItem.undecodedByteSequence(Base64.encode(signature.signature)), parameters: OrderedMap<String, RFC9651BareItem>()))
        var serializer = StructuredFieldValueSerializer()
        do {
            let input = try serializer.writeDictionaryFieldValue(inputs)
            let value = try serializer.writeDictionaryFieldValue(values)
            return (String(decoding: input, as: UTF8.self), String(decoding: value, as: UTF8.self))
        } catch {
            throw HTTPSignatureError(.invalidComponent, "the label '\(signature.label)' or a component or parameter cannot be written as a structured field (lowercase label; printable ASCII)")
        }
    }

    /// Whether `label` is a structured-field dictionary key (RFC 9651 §3.2): a lowercase letter or `*`,
    /// then lowercase letters, digits, `_`, `-`, `.` and `*`.
    static func isValidLabel(_ label: String) -> Bool {
        guard let first = label.utf8.first, FieldScanner.isLowercase(first) || first == UInt8(ascii: "*") else { return false }
        return label.utf8.allSatisfy(FieldScanner.isKeyByte)
    }

    // MARK: - Parsing

    /// The most parameters one component or signature may carry (RFC 9421 defines six for a
    /// signature, five for a component); more are refused as malformed.
    static let maximumParameters = 16

    /// Refuses a field value with more than `members` members or an item with more than
    /// ``maximumParameters`` parameters before any parser reads it (``FieldScanner/extent(of:)``).
    /// - Throws: ``HTTPSignatureError`` `.malformedSignature`.
    static func checkExtent(_ value: String, field: String, members: Int) throws(HTTPSignatureError) {
        let extent = FieldScanner.extent(of: value)
        guard extent.members <= members else {
            throw HTTPSignatureError(.malformedSignature, "the \(field) field has more than \(members) members")
        }
        guard extent.parameters <= maximumParameters else {
            throw HTTPSignatureError(.malformedSignature, "the \(field) field has an item with more than \(maximumParameters) parameters")
        }
    }

    static func dictionary(_ value: String, field: String) throws(HTTPSignatureError) -> OrderedMap<String, ItemOrInnerList> {
        var parser = StructuredFieldValueParser(Array(value.utf8))
        do {
            return try parser.parseDictionaryFieldValue()
        } catch {
            throw HTTPSignatureError(.malformedSignature, "the \(field) field is not a structured dictionary")
        }
    }

    static func parseInput(_ input: ItemOrInnerList, label: String) throws(HTTPSignatureError) -> ([HTTPSignatureComponent], HTTPSignatureParameters) {
        guard case .innerList(let list) = input else {
            throw HTTPSignatureError(.malformedSignature, "Signature-Input's '\(label)' is not an inner list of components")
        }
        guard list.bareInnerList.count <= maximumComponents else {
            throw HTTPSignatureError(.malformedSignature, "'\(label)' covers \(list.bareInnerList.count) components; at most \(maximumComponents) are read")
        }
        var components: [HTTPSignatureComponent] = []
        for item in list.bareInnerList {
            components.append(try component(item, label: label))
        }
        return (components, try parameters(list.rfc9651Parameters, label: label))
    }

    static func component(_ item: Item, label: String) throws(HTTPSignatureError) -> HTTPSignatureComponent {
        guard case .string(let name) = item.rfc9651BareItem else {
            throw HTTPSignatureError(.malformedSignature, "'\(label)' lists a component that is not a string")
        }
        var parameters: [HTTPSignatureComponent.Parameter] = []
        for (key, value) in item.rfc9651Parameters {
            switch (key, value) {
            case ("name", .string(let text)): parameters.append(.name(text))
            case ("key", .string(let text)): parameters.append(.key(text))
            case ("sf", .bool(true)): parameters.append(.structured)
            case ("bs", .bool(true)): parameters.append(.byteSequence)
            case ("req", .bool(true)): parameters.append(.request)
            default:
                throw HTTPSignatureError(.invalidComponent, "'\(label)': the component parameter '\(key)' of \"\(name)\" is not one Coffer supports (name, key, sf, bs, req)")
            }
        }
        return HTTPSignatureComponent(name: name, parameters: parameters)
    }

    static func parameters(_ map: OrderedMap<String, RFC9651BareItem>, label: String) throws(HTTPSignatureError) -> HTTPSignatureParameters {
        var parameters = HTTPSignatureParameters()
        var order: [String] = []
        func wrongType(_ name: String, _ expected: String) -> HTTPSignatureError {
            HTTPSignatureError(.invalidParameter, "'\(label)': the \(name) parameter must be \(expected)")
        }
        for (name, value) in map {
            order.append(name)
            switch name {
            case "created":
                guard case .integer(let number) = value else { throw wrongType(name, "an integer") }
                parameters.created = number
            case "expires":
                guard case .integer(let number) = value else { throw wrongType(name, "an integer") }
                parameters.expires = number
            case "nonce":
                guard case .string(let text) = value else { throw wrongType(name, "a string") }
                parameters.nonce = text
            case "alg":
                guard case .string(let text) = value else { throw wrongType(name, "a string") }
                parameters.algorithm = text
            case "keyid":
                guard case .string(let text) = value else { throw wrongType(name, "a string") }
                parameters.keyID = text
            case "tag":
                guard case .string(let text) = value else { throw wrongType(name, "a string") }
                parameters.tag = text
            default:
                throw HTTPSignatureError(.invalidParameter, "'\(label)': the signature parameter '\(name)' is not one RFC 9421 defines")
            }
        }
        parameters.order = order
        return parameters
    }

    static func signatureBytes(_ value: ItemOrInnerList, label: String) throws(HTTPSignatureError) -> [UInt8] {
        guard case .item(let item) = value, case .undecodedByteSequence(let encoded) = item.rfc9651BareItem else {
            throw HTTPSignatureError(.malformedSignature, "Signature's '\(label)' is not a byte sequence")
        }
        guard let bytes = signatureBytes(encoded) else {
            throw HTTPSignatureError(.malformedSignature, "Signature's '\(label)' is not base64 of at most \(maximumSignatureBytes) bytes")
        }
        return bytes
    }

    /// The signature a byte sequence's base64 text carries: nil when it is not base64, is empty, or
    /// is longer than ``maximumSignatureBytes``.
    static func signatureBytes(_ encoded: String) -> [UInt8]? {
        guard encoded.utf8.count <= (maximumSignatureBytes / 3 + 1) * 4, let bytes = try? Base64.decode(encoded), !bytes.isEmpty else { return nil }
        return bytes
    }

    // MARK: - Scanning

    /// ``signatures(in:)`` for fields in the shapes ``FieldScanner`` reads, within every limit; nil
    /// for anything else, which ``parsedSignatures(input:signature:)`` then reads or refuses.
    static func scannedSignatures(input: String, signature: String) -> [HTTPMessageSignature]? {
        var values: [(label: String, bytes: [UInt8])] = []
        var scanner = FieldScanner(signature)
        let labels = scanner.dictionary { scanner, label in
            guard let encoded = scanner.byteSequence(), let bytes = signatureBytes(encoded) else { return false }
            values.append((label, bytes))
            return true
        }
        guard labels != nil else { return nil }
        var result: [HTTPMessageSignature] = []
        scanner = FieldScanner(input)
        let inputLabels = scanner.dictionary { scanner, label in
            guard result.count < maximumSignatures, let bytes = values.first(where: { $0.label == label })?.bytes,
                  let list = scanner.innerListOfStrings(), list.items.count <= maximumComponents,
                  let components = scannedComponents(list.items), let parameters = scannedParameters(list.parameters) else { return false }
            result.append(HTTPMessageSignature(label: label, components: components, parameters: parameters, signature: bytes))
            return true
        }
        guard inputLabels != nil, result.count == values.count else { return nil }
        return result
    }

    /// The components of a scanned inner list, as ``component(_:label:)`` makes them; nil for a
    /// parameter it would refuse.
    static func scannedComponents(_ items: [(String, [(String, FieldScanner.Value)])]) -> [HTTPSignatureComponent]? {
        var components: [HTTPSignatureComponent] = []
        components.reserveCapacity(items.count)
        for (name, scanned) in items {
            var parameters: [HTTPSignatureComponent.Parameter] = []
            for (key, value) in scanned {
                switch (key, value) {
                case ("name", .string(let text)): parameters.append(.name(text))
                case ("key", .string(let text)): parameters.append(.key(text))
                case ("sf", .true): parameters.append(.structured)
                case ("bs", .true): parameters.append(.byteSequence)
                case ("req", .true): parameters.append(.request)
                default: return nil
                }
            }
            components.append(HTTPSignatureComponent(name: name, parameters: parameters))
        }
        return components
    }

    /// Scanned signature parameters, as ``parameters(_:label:)`` reads them; nil for a name or type it
    /// would refuse.
    static func scannedParameters(_ scanned: [(String, FieldScanner.Value)]) -> HTTPSignatureParameters? {
        var parameters = HTTPSignatureParameters()
        for (name, value) in scanned {
            switch (name, value) {
            case ("created", .integer(let number)): parameters.created = number
            case ("expires", .integer(let number)): parameters.expires = number
            case ("nonce", .string(let text)): parameters.nonce = text
            case ("alg", .string(let text)): parameters.algorithm = text
            case ("keyid", .string(let text)): parameters.keyID = text
            case ("tag", .string(let text)): parameters.tag = text
            default: return nil
            }
        }
        parameters.order = scanned.map(\.0)
        return parameters
    }
}
