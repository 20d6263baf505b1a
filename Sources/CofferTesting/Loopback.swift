import NIOCore
import NIOPosix

/// What the loopback servers share: listening.
enum Loopback {
    /// A server channel on `host` (an ephemeral port) whose accepted connections `setUp` prepares, and
    /// its port.
    static func listen(on host: String, _ setUp: @escaping @Sendable (any Channel) throws -> Void) async throws -> (channel: any Channel, port: Int) {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture { try setUp(child) }
            }
            .bind(host: host, port: 0).get()
        return (channel, channel.localAddress?.port ?? 0)
    }
}
