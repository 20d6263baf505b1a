package import HTTPTypes

extension HTTPFields {
    /// A field's lines combined into one value with `, ` (RFC 9110 §5.3), nil when the message has
    /// none: what `self[name]` gives for every field but `Cookie`, without the copy `self[name]` makes
    /// of a field sent on one line (the common case, a lookup every signed request makes several of).
    package func combinedLines(of name: HTTPField.Name) -> String? {
        var combined: String?
        // By position, names compared in place: a `for field in self` loop copies every field it
        // passes (retaining its name's two strings and its value).
        for index in indices where self[index].name.canonicalName == name.canonicalName {
            if let earlier = combined {
                combined = earlier + ", " + self[index].value
            } else {
                combined = self[index].value
            }
        }
        return combined
    }
}
