public import Logging

/// swift-log's standard-error lines (`StreamLogHandler`'s format, byte for byte) from a handler that
/// renders its metadata only when a message is logged.
///
/// `StreamLogHandler` renders all of a logger's metadata into text each time one value is set, and a
/// server sets values on every request (Hummingbird its request id, the signature middleware the
/// key id) that a server logging at `info` never prints. Here setting a value is a dictionary
/// insert; a message's line merges the logger's metadata, the metadata provider's and the message's
/// own, in that order of precedence from lowest, as `StreamLogHandler` does.
///
/// ```swift
/// let logger = Logger(label: "coffer.serve", factory: ServerLogHandler.standardError)
/// ```
public struct ServerLogHandler: LogHandler {
    /// A handler writing to standard error, with the logging system's metadata provider.
    public static func standardError(label: String) -> ServerLogHandler {
        ServerLogHandler(writer: .standardError(label: label, metadataProvider: nil), metadataProvider: LoggingSystem.metadataProvider)
    }

    /// A handler writing lines for `label` to `stream`, with `metadataProvider`'s metadata in each.
    public init(label: String, stream: any TextOutputStream & Sendable, metadataProvider: Logger.MetadataProvider?) {
        self.init(writer: StreamLogHandler(label: label, stream: stream, metadataProvider: nil), metadataProvider: metadataProvider)
    }

    /// Formats and writes; never holds metadata of its own, so it renders only at log time.
    private var writer: StreamLogHandler

    /// The logger's metadata, rendered only into the lines it logs.
    public var metadata: Logger.Metadata = [:]

    /// Metadata gathered at each message (task-local values, for example), between the logger's
    /// metadata and the message's own.
    public var metadataProvider: Logger.MetadataProvider?

    /// The lowest level logged.
    public var logLevel: Logger.Level {
        get { writer.logLevel }
        set { writer.logLevel = newValue }
    }

    private init(writer: StreamLogHandler, metadataProvider: Logger.MetadataProvider?) {
        self.writer = writer
        self.metadataProvider = metadataProvider
    }

    /// One value of the logger's metadata.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as `StreamLogHandler` would have with the same metadata.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let own = event.metadata, !own.isEmpty {
            merged.merge(own) { _, own in own }
        }
        var event = event
        event.metadata = merged
        writer.log(event: event)
    }
}
