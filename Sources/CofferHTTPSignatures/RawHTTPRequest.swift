public import HTTPTypes

/// Reads an HTTP/1.1 request as bytes — from a file, a capture, standard input — into an `HTTPRequest`
/// and its body, so that its signatures can be checked (`coffer http verify`).
///
/// Lines may end in CRLF or a bare LF. The target may be origin-form (`/path?q`, with `Host` giving the
/// authority) or absolute-form (`https://host/path`). The body is `Content-Length` bytes, or everything
/// after the header section when there is no `Content-Length`; chunked transfer coding is refused.
public enum RawHTTPRequest {
    /// Limits on what is read.
    public struct Limits: Sendable, Hashable {
        /// The largest header section (request line and fields), in bytes.
        public var maximumHeaderBytes = 64 * 1024
        /// The most header fields.
        public var maximumFields = 256
        /// The largest body, in bytes.
        public var maximumBodyBytes = 16 * 1024 * 1024

        /// The defaults: 64 KiB of header, 256 fields, a 16 MiB body.
        public init() {}
    }

    /// Parses a request.
    /// - Parameters:
    ///   - bytes: the request as it came off the wire: request line, header fields, body.
    ///   - scheme: the scheme to assume for an origin-form target (`https` by default).
    ///   - limits: the largest header, the most fields and the largest body accepted.
    /// - Throws: ``HTTPSignatureError`` `.malformedMessage` naming what is wrong.
    public static func parse(_ bytes: [UInt8], scheme: String = "https", limits: Limits = Limits()) throws(HTTPSignatureError) -> (request: HTTPRequest, body: [UInt8]) {
        func malformed(_ reason: String) -> HTTPSignatureError { HTTPSignatureError(.malformedMessage, reason) }
        var lines: [String] = []
        var index = 0
        var lineStart = 0
        var headerEnd: Int?
        while index < bytes.count {
            guard index < limits.maximumHeaderBytes else { throw malformed("the header section is longer than \(limits.maximumHeaderBytes) bytes") }
            if bytes[index] == UInt8(ascii: "\n") {
                var end = index
                if end > lineStart && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                if end == lineStart {
                    if lines.isEmpty { lineStart = index + 1; index += 1; continue } // tolerate a leading blank line
                    headerEnd = index + 1
                    break
                }
                let line = bytes[lineStart..<end]
                guard !line.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") }) else { throw malformed("a header line contains a NUL or a stray CR") }
                lines.append(String(decoding: line, as: UTF8.self))
                guard lines.count <= limits.maximumFields + 1 else { throw malformed("more than \(limits.maximumFields) header fields") }
                lineStart = index + 1
            }
            index += 1
        }
        guard let headerEnd else { throw malformed("the header section does not end with an empty line (truncated?)") }
        guard let requestLine = lines.first else { throw malformed("there is no request line") }

        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            throw malformed("the request line is not 'METHOD TARGET HTTP/1.1'")
        }
        guard let method = HTTPRequest.Method(String(parts[0])) else { throw malformed("'\(parts[0])' is not a method") }
        var fields = HTTPFields()
        var host: String?
        var contentLength: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw malformed("the header line '\(line.clipped(toUTF8: 40))' has no colon") }
            guard line.first != " " && line.first != "\t" else { throw malformed("folded header lines (obs-fold) are not accepted") }
            let rawName = String(line[..<colon])
            guard let name = HTTPField.Name(rawName) else { throw malformed("'\(rawName.clipped(toUTF8: 40))' is not a field name") }
            let value = String(line[line.index(after: colon)...]).trimmingWhitespace()
            guard HTTPField.isValidValue(value) else { throw malformed("the \(rawName) field's value has characters a field cannot carry") }
            switch name.canonicalName {
            case "host":
                guard host == nil else { throw malformed("more than one Host field") }
                host = value
            case "content-length":
                guard let length = Int(value), length >= 0, contentLength == nil || contentLength == length else {
                    throw malformed("Content-Length '\(value.clipped(toUTF8: 20))' is not one non-negative number")
                }
                contentLength = length
            case "transfer-encoding":
                throw malformed("Transfer-Encoding is not supported; send the request with Content-Length")
            default:
                break
            }
            fields.append(HTTPField(name: name, value: value))
        }

        var target = String(parts[1])
        var requestScheme = scheme
        var authority = host
        if let range = target.range(of: "://"), target.hasPrefix("http") {
            requestScheme = String(target[..<range.lowerBound]).lowercased()
            let rest = target[range.upperBound...]
            let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            authority = String(rest[..<slash])
            target = rest[slash...].isEmpty ? "/" : String(rest[slash...])
        }
        guard target.hasPrefix("/") || (target == "*" && method == .options) else {
            throw malformed("the target '\(target.clipped(toUTF8: 40))' is neither a path nor an absolute URL")
        }

        let available = bytes.count - headerEnd
        let bodyLength = contentLength ?? available
        guard bodyLength <= limits.maximumBodyBytes else { throw malformed("the body is longer than \(limits.maximumBodyBytes) bytes") }
        guard available >= bodyLength else { throw malformed("the body is \(available) bytes but Content-Length says \(bodyLength) (truncated?)") }
        let request = HTTPRequest(method: method, scheme: requestScheme, authority: authority, path: target, headerFields: fields)
        return (request, Array(bytes[headerEnd..<(headerEnd + bodyLength)]))
    }
}
