extension FileReader {
    /// Calls `body` with each line of the input (without its line feed) and its 1-based number.
    ///
    /// Memory stays bounded by `maximumLength`: a longer line is cut to `maximumLength + 1` bytes (the
    /// rest discarded) so the caller can tell it was too long and report it, instead of buffering it.
    /// Bytes that are not UTF-8 are replaced with U+FFFD. A final line without a line feed is delivered.
    public func forEachLine(
        maximumLength: Int = 65_536,
        _ body: (_ line: Substring, _ number: Int) throws -> Void
    ) throws {
        var pending: [UInt8] = []
        var number = 0
        var overflow = false
        func deliver() throws {
            number += 1
            try body(Substring(String(decoding: pending, as: UTF8.self)), number)
            pending.removeAll(keepingCapacity: true)
            overflow = false
        }
        try forEachChunk(chunkSize: 1 << 16) { chunk in
            var start = chunk.startIndex
            while start < chunk.endIndex {
                let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n"))
                let end = newline ?? chunk.endIndex
                if !overflow {
                    let room = maximumLength + 1 - pending.count
                    pending.append(contentsOf: chunk[start..<min(end, start + room)])
                    overflow = pending.count > maximumLength
                }
                guard let newline else { return }
                try deliver()
                start = newline + 1
            }
        }
        if !pending.isEmpty { try deliver() }
    }
}
