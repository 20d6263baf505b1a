import CPKCS11

/// A PKCS #11 attribute template (`CK_ATTRIBUTE[]`) built from Swift values, with buffers that live as
/// long as the call that reads them.
struct AttributeTemplate {
    private var entries: [(type: UInt, value: [UInt8])] = []

    mutating func add(_ type: UInt, _ value: [UInt8]) { entries.append((type, value)) }
    mutating func add(_ type: UInt, _ value: Bool) { entries.append((type, [value ? 1 : 0])) }
    mutating func add(_ type: UInt, _ value: UInt) {
        entries.append((type, withUnsafeBytes(of: CK_ULONG(value)) { Array($0) }))
    }

    /// Calls `body` with the attributes; their values point into buffers valid for the call only.
    func withAttributes<Result>(_ body: (UnsafeMutableBufferPointer<CK_ATTRIBUTE>) throws(PKCS11Error) -> Result) throws(PKCS11Error) -> Result {
        let (attributes, buffers) = materialize()
        defer { for buffer in buffers { buffer.deallocate() } }
        var list = attributes
        return try list.withUnsafeMutableBufferPointer { pointer throws(PKCS11Error) in try body(pointer) }
    }

    /// The same, for a body that cannot throw (under a lock already held).
    func withAttributesUnchecked<Result>(_ body: (UnsafeMutableBufferPointer<CK_ATTRIBUTE>) -> Result) -> Result {
        let (attributes, buffers) = materialize()
        defer { for buffer in buffers { buffer.deallocate() } }
        var list = attributes
        return list.withUnsafeMutableBufferPointer { body($0) }
    }

    private func materialize() -> ([CK_ATTRIBUTE], [UnsafeMutableRawBufferPointer]) {
        let buffers = entries.map { entry -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, entry.value.count), alignment: MemoryLayout<CK_ULONG>.alignment)
            buffer.copyBytes(from: entry.value)
            return buffer
        }
        let attributes = zip(entries, buffers).map { entry, buffer in
            CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(entry.type), pValue: buffer.baseAddress, ulValueLen: CK_ULONG(entry.value.count))
        }
        return (attributes, buffers)
    }
}
