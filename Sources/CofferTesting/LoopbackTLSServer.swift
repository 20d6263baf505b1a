import NIOCore
import NIOSSL

/// A TLS server on a loopback address (127.0.0.1 by default, or `::1`; an ephemeral port) that serves a
/// given chain and answers every HTTP/1.1 request with `200 ok`, for tests of TLS clients. Shut it down
/// with ``shutdown()``.
public final class LoopbackTLSServer: Sendable {
    /// The port it listens on.
    public let port: Int
    private let channel: any Channel

    /// Starts a server presenting `chain` (leaf first, DER) with the leaf's private key (PEM), listening
    /// on `host` (`127.0.0.1`, or `::1` for IPv6).
    public init(chain: [[UInt8]], privateKeyPEM: String, host: String = "127.0.0.1") async throws {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try chain.map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
        )
        configuration.minimumTLSVersion = .tlsv12
        let context = try NIOSSLContext(configuration: configuration)
        (channel, port) = try await Loopback.listen(on: host) { child in
            try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            try child.pipeline.syncOperations.addHandler(FixedHTTPResponder())
        }
    }

    /// Stops listening.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// Answers each request (everything up to a blank line; bodies are not expected) with `200 ok`.
private final class FixedHTTPResponder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var pending: [UInt8] = []
    private static let response = Array("HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: text/plain\r\n\r\nok".utf8)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let end = Self.endOfHead(pending) {
            pending.removeFirst(end)
            context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: Self.response)), promise: nil)
        }
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index - 3] == 13 && bytes[index - 2] == 10 && bytes[index - 1] == 13 && bytes[index] == 10 {
            return index + 1
        }
        return nil
    }
}
