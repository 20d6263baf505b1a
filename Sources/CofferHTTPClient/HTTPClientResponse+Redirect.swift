public import AsyncHTTPClient

extension HTTPClientResponse {
    /// Where a redirect (a 3xx status with a `Location` field) points, as text fit to show: at most 512
    /// characters, control characters replaced by `?` (the field is the server's to choose). Nil for
    /// any other response.
    ///
    /// Signed requests never follow a redirect (`HTTPClient.execute(signing:body:with:timeout:)`); this
    /// is what to tell the caller instead.
    public var redirectLocation: String? {
        guard (300..<400).contains(status.code), let location = headers.first(name: "location") else { return nil }
        let shown = location.unicodeScalars.prefix(512).map { $0.properties.generalCategory == .control ? "?" : Character($0) }
        return String(shown)
    }
}
