/// Comparisons whose running time does not depend on where two secrets differ.
///
/// Every comparison of MACs, tags and other secret-derived bytes in Coffer goes through here, so that a
/// reviewer has one place to check.
public enum ConstantTime {
    /// Whether two byte sequences are equal, examining every byte of the longer one.
    ///
    /// The time taken depends only on the lengths, which are public for every use in Coffer (tag lengths
    /// are fixed by the algorithm). Sequences of different lengths are unequal.
    public static func equals<A: Collection, B: Collection>(_ lhs: A, _ rhs: B) -> Bool
    where A.Element == UInt8, B.Element == UInt8 {
        // Generic code from another module runs unspecialised (slowly, and allocating); compare plain
        // buffers instead, copying a non-contiguous input first.
        let result = lhs.withContiguousStorageIfAvailable { left in
            rhs.withContiguousStorageIfAvailable { right in
                equals(buffer: UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
            }
        }
        if let result = result ?? nil { return result }
        return Array(lhs).withUnsafeBytes { left in
            Array(rhs).withUnsafeBytes { right in equals(buffer: left, right) }
        }
    }

    @inline(never)
    private static func equals(buffer lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        var difference: UInt8 = lhs.count == rhs.count ? 0 : 1
        let length = max(lhs.count, rhs.count)
        for index in 0..<length {
            let left = index < lhs.count ? lhs[index] : 0
            let right = index < rhs.count ? rhs[index] : 0
            difference |= left ^ right
        }
        return opaque(difference) == 0
    }

    // Hides the accumulated value from the optimiser so it cannot short-circuit the loop.
    @inline(never)
    private static func opaque(_ value: UInt8) -> UInt8 {
        withUnsafePointer(to: value) { $0.withMemoryRebound(to: UInt8.self, capacity: 1) { $0.pointee } }
    }
}
