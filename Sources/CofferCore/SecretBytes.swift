/// Scrubbing secrets (passwords, key bytes) from memory Coffer owns once they are no longer needed.
public enum SecretBytes {
    /// Overwrites every byte of `bytes` with zero, in place.
    ///
    /// Swift may have copied the array before (copy-on-write); this clears the storage the caller holds,
    /// which is the last copy Coffer made.
    public static func wipe(_ bytes: inout [UInt8]) {
        _ = bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
