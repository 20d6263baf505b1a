/// Fixed-width integers as big-endian bytes, the byte order of every Coffer format.
public enum BigEndian {
    /// `value` as 4 bytes, most significant first.
    public static func bytes(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// `value` as 8 bytes, most significant first.
    public static func bytes(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// The value of the first 4 bytes, big-endian (the caller checks that there are 4).
    public static func uint32<Bytes: Collection>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The value of the first 8 bytes, big-endian (the caller checks that there are 8).
    public static func uint64<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
