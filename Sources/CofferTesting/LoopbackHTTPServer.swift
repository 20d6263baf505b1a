import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A plain HTTP/1.1 server on 127.0.0.1 (an ephemeral port) that answers each request as `respond` says
/// and records every request it received, for tests of what an HTTP client sends where: redirects to
/// another origin, fields and bodies that must not arrive. Shut it down with ``shutdown()``.
///
/// ```swift
/// let elsewhere = try await LoopbackHTTPServer { _ in .init(status: 200) }
/// let server = try await LoopbackHTTPServer { _ in .redirect(307, to: "http://127.0.0.1:\(elsewhere.port)/") }
/// // … send a request to server.port …
/// #expect(elsewhere.received.isEmpty)
/// ```
public final class LoopbackHTTPServer: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        /// The method (`POST`).
        public let method: String
        /// The request target (`/orders?page=2`).
        public let target: String
        /// The header fields in the order they came, names as sent.
        public let fields: [Field]
        /// The body (at most 1 MiB is kept).
        public let body: [UInt8]

        /// The value of the first field named `name` (case-insensitively), if any.
        public func value(of name: String) -> String? {
            fields.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// A header field.
    public struct Field: Sendable, Hashable {
        /// Its name.
        public let name: String
        /// Its value.
        public let value: String

        /// A field.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// How the server answers a request.
    public struct Answer: Sendable {
        /// The status code.
        public let status: Int
        /// The header fields (`Content-Length` is added).
        public let fields: [Field]
        /// The body.
        public let body: [UInt8]

        /// An answer.
        public init(status: Int, fields: [Field] = [], body: [UInt8] = []) {
            self.status = status
            self.fields = fields
            self.body = body
        }

        /// A redirect with status `status` (301, 302, 303, 307, 308) to `location`.
        public static func redirect(_ status: Int, to location: String) -> Answer {
            Answer(status: status, fields: [Field("Location", location)], body: Array("moved".utf8))
        }
    }

    /// The port it listens on.
    public let port: Int
    private let channel: any Channel
    private let requests: NIOLockedValueBox<[Request]>

    /// Every request received so far, in order.
    public var received: [Request] { requests.withLockedValue { $0 } }

    /// Starts a server answering each request with `respond(request)`.
    public init(respond: @escaping @Sendable (Request) -> Answer) async throws {
        let requests = NIOLockedValueBox<[Request]>([])
        self.requests = requests
        (channel, port) = try await Loopback.listen(on: "127.0.0.1") { child in
            try child.pipeline.syncOperations.configureHTTPServerPipeline()
            try child.pipeline.syncOperations.addHandler(RecordingResponder(requests: requests, respond: respond))
        }
    }

    /// Stops listening.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// Collects one request (head and body), records it, and writes the answer.
private final class RecordingResponder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let requests: NIOLockedValueBox<[LoopbackHTTPServer.Request]>
    private let respond: @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Answer
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(requests: NIOLockedValueBox<[LoopbackHTTPServer.Request]>, respond: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Answer) {
        self.requests = requests
        self.respond = respond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var chunk):
            if body.count < 1 << 20 { body += chunk.readBytes(length: chunk.readableBytes) ?? [] }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = LoopbackHTTPServer.Request(
                method: head.method.rawValue, target: head.uri,
                fields: head.headers.map { LoopbackHTTPServer.Field($0.name, $0.value) }, body: body
            )
            requests.withLockedValue { $0.append(request) }
            let answer = respond(request)
            var fields = HTTPHeaders(answer.fields.map { ($0.name, $0.value) })
            fields.replaceOrAdd(name: "Content-Length", value: String(answer.body.count))
            let status = HTTPResponseStatus(statusCode: answer.status)
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: answer.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
