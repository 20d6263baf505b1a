import CofferCrypto

/// Test data that needs no files checked in.
public enum Fixtures {
    /// `count` bytes from the secure generator, produced in 1 MiB pieces so that large fixtures are cheap.
    public static func randomBytes(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return bytes
    }
}
