import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// An HTTP `CONNECT` proxy on 127.0.0.1 that tunnels every request to one loopback port, whatever host it
/// names. For testing HTTPS clients under any host name (`api.example.test`, a wildcard's names)
/// without DNS: point the client's proxy at it, and the client still sends that name as SNI and
/// validates the certificate against it. Shut it down with ``shutdown()``.
///
/// ```swift
/// let proxy = try await LoopbackConnectProxy(upstreamPort: server.port)
/// configuration.proxy = .server(host: "127.0.0.1", port: proxy.port)
/// ```
public final class LoopbackConnectProxy: Sendable {
    /// The port it listens on.
    public let port: Int
    private let channel: any Channel
    private let requests = NIOLockedValueBox<[String]>([])

    /// The hosts (`host:port`) clients asked for, in order.
    public var requestedAuthorities: [String] { requests.withLockedValue { $0 } }

    /// Starts a proxy tunnelling to `127.0.0.1:upstreamPort`.
    public init(upstreamPort: Int) async throws {
        let requests = self.requests
        (channel, port) = try await Loopback.listen(on: "127.0.0.1") { child in
            try child.pipeline.syncOperations.addHandler(ConnectHandler(upstreamPort: upstreamPort, requests: requests))
        }
    }

    /// Stops listening.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// Reads the `CONNECT` head, connects upstream, answers `200`, then relays bytes both ways.
private final class ConnectHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let upstreamPort: Int
    private let requests: NIOLockedValueBox<[String]>
    private var head: [UInt8] = []
    private var connecting = false

    init(upstreamPort: Int, requests: NIOLockedValueBox<[String]>) {
        self.upstreamPort = upstreamPort
        self.requests = requests
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !connecting else { return }
        var buffer = unwrapInboundIn(data)
        head += buffer.readBytes(length: buffer.readableBytes) ?? []
        guard let end = head.indices.dropFirst(3).first(where: { head[$0 - 3...$0].elementsEqual([13, 10, 13, 10]) }) else {
            if head.count > 8192 { context.close(promise: nil) }
            return
        }
        let line = String(decoding: head.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        guard line.count == 3, line[0] == "CONNECT" else {
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")), promise: nil)
            context.close(promise: nil)
            return
        }
        requests.withLockedValue { $0.append(String(line[1])) }
        let leftover = Array(head[(end + 1)...])
        connecting = true
        let downstream = context.channel
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .connect(host: "127.0.0.1", port: upstreamPort)
            .whenComplete { result in
                let context = loopBound.value
                switch result {
                case .failure:
                    context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(string: "HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")), promise: nil)
                    context.close(promise: nil)
                case .success(let upstream):
                    context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
                    do {
                        try upstream.pipeline.syncOperations.addHandler(Relay(partner: downstream))
                        try context.pipeline.syncOperations.addHandler(Relay(partner: upstream))
                        if !leftover.isEmpty { upstream.writeAndFlush(upstream.allocator.buffer(bytes: leftover), promise: nil) }
                        context.pipeline.syncOperations.removeHandler(self, promise: nil)
                    } catch {
                        upstream.close(promise: nil)
                        context.close(promise: nil)
                    }
                }
            }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Writes what one channel reads to its partner, and closes the partner when it closes.
private final class Relay: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(Self.unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
