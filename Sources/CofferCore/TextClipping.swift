extension StringProtocol {
    /// At most the first `byteCount` bytes of this text's UTF-8, cut at the end of a Unicode scalar
    /// (never inside one), for quoting text someone else chose in a message or a log line: a
    /// `Character` can hold any number of scalars (a letter followed by thousands of combining marks),
    /// so a cut by characters bounds nothing.
    /// - Parameter byteCount: the most UTF-8 bytes kept (0 or more).
    /// - Returns: the text, whole when it fits.
    public func clipped(toUTF8 byteCount: Int) -> String {
        var kept = 0
        var end = unicodeScalars.startIndex
        for scalar in unicodeScalars {
            let size = UTF8.width(scalar)
            guard kept + size <= byteCount else {
                var cut = String.UnicodeScalarView()
                cut.append(contentsOf: unicodeScalars[..<end])
                return String(cut)
            }
            kept += size
            end = unicodeScalars.index(after: end)
        }
        return String(self)
    }
}
