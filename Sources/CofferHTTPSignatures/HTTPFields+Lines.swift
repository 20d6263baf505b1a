public import HTTPTypes

extension HTTPFields {
    /// A field's lines combined into one value with `, ` (RFC 9110 §5.3), nil when the message has
    /// none: what `self[name]` gives for every field but `Cookie`, without the copy `self[name]` makes
    /// of a field sent on one line (the common case, a lookup every signed request makes several of).
    package func combinedLines(of name: HTTPField.Name) -> String? {
        var combined: String?
        for field in self where field.name == name {
            if let earlier = combined {
                combined = earlier + ", " + field.value
            } else {
                combined = field.value
            }
        }
        return combined
    }
}
