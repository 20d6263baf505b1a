import CofferCore
import Foundation

/// A fresh folder (mode 0700) under the system's temporary directory, removed with everything in it when
/// the value is released. For tests that need real files.
public final class TemporaryDirectory: @unchecked Sendable {
    /// The folder's absolute path.
    public let path: String

    /// Creates the folder.
    /// - Throws: if the system refuses to create it.
    public init(prefix: String = "coffer-test") throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return mkdtemp(base) != nil
        }
        guard created else { throw CocoaError(.fileWriteUnknown) }
        path = template.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The path of `name` inside the folder.
    public func path(_ name: String) -> String { "\(path)/\(name)" }

    /// Writes `bytes` to `name` inside the folder and returns its path.
    @discardableResult
    public func write<Bytes: Sequence>(_ bytes: Bytes, to name: String) throws -> String where Bytes.Element == UInt8 {
        let target = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Writes a string's UTF-8 bytes to `name` inside the folder and returns its path.
    @discardableResult
    public func write(_ text: String, to name: String) throws -> String {
        try write(Array(text.utf8), to: name)
    }

    /// The bytes of the file `name` inside the folder.
    public func read(_ name: String) throws -> [UInt8] {
        try FileReader.open(path(name)).readAll(limit: .max) ?? []
    }

    /// The names of the files in the folder, sorted.
    public func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
