import CofferCore
import CofferCrypto

/// Test data that needs no files checked in.
public enum Fixtures {
    /// `count` bytes from the secure generator, produced in 1 MiB pieces so that large fixtures are cheap.
    public static func randomBytes(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return bytes
    }

    /// The whole contents of a file. Test helpers read files through this rather than
    /// `Data(contentsOf:)`, which on Linux (swift-foundation in Swift 6.3) leaks a 4 KiB buffer for every
    /// empty file it reads (the zero-size path), and would fill AddressSanitizer runs with leak reports.
    public static func contents(ofFile path: String) throws -> [UInt8] {
        try FileReader.open(path).readAll(limit: .max) ?? []
    }
}
