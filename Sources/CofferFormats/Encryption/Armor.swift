import CofferCore

/// ASCII armour for Coffer files (docs/FORMAT-ENCRYPTION.md, "Armour"): the file's bytes as base64
/// lines of 64 characters between `-----BEGIN COFFER ENCRYPTED FILE-----` and
/// `-----END COFFER ENCRYPTED FILE-----`, so an encrypted file can travel as text.
///
/// Armour is an encoding, not a format: ``AnyFormatDecryptor`` detects it and decrypts what it holds
/// (always a Coffer file) as a stream. ``ArmorWriter`` writes it as a stream.
///
/// ```swift
/// let text = CofferArmor.armor(try CofferEncryption.encrypt(plaintext, to: .recipients([alice])))
/// let file = try CofferArmor.dearmor(Array(text.utf8))
/// ```
public enum CofferArmor {
    /// The line that opens armour.
    public static let beginLine = "-----BEGIN COFFER ENCRYPTED FILE-----"
    /// The line that closes armour.
    public static let endLine = "-----END COFFER ENCRYPTED FILE-----"
    /// Characters of base64 on every line but the last (48 bytes of the file).
    public static let lineLength = 64
    /// The most whitespace readers skip before the begin line.
    public static let maximumLeadingWhitespace = 1024

    /// Whether an input starting with `prefix` is armour rather than a binary file: after an optional
    /// UTF-8 byte order mark, whitespace and then `-`. No binary format Coffer reads starts so; the
    /// armour reader then checks the begin line itself.
    public static func mayBeArmor(_ prefix: [UInt8]) -> Bool {
        var rest = prefix[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        guard let first = rest.first(where: { !isWhitespace($0) }) else { return !prefix.isEmpty }
        return first == UInt8(ascii: "-")
    }

    /// Armours a whole file held in memory.
    public static func armor(_ file: [UInt8]) -> String {
        var text: [UInt8] = []
        let writer = ArmorWriter { text.append(contentsOf: $0) }
        // Writing to memory cannot fail.
        try? file.withUnsafeBytes { try writer.write($0) }
        try? writer.finish()
        return String(decoding: text, as: UTF8.self)
    }

    /// Decodes armour held in memory to the file it holds.
    /// - Throws: ``CofferFormatsError`` `.malformedCiphertext` naming the line, for anything
    ///   docs/FORMAT-ENCRYPTION.md's readers refuse (but it does not check what the bytes are).
    public static func dearmor(_ text: [UInt8]) throws(CofferFormatsError) -> [UInt8] {
        let source = ArmoredSource(MemorySource(text))
        var file: [UInt8] = []
        do {
            _ = try source.forEachChunk(chunkSize: 1 << 16) { chunk in file.append(contentsOf: chunk) }
        } catch let error as CofferFormatsError {
            throw error
        } catch {
            throw CofferFormatsError(.malformedCiphertext, "the armour cannot be read", underlying: error)
        }
        return file
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Writes armour as a stream: bytes in, base64 lines out, the end line on ``finish()``.
public final class ArmorWriter {
    private let output: (UnsafeRawBufferPointer) throws -> Void
    /// Fewer than 48 bytes not yet on a line.
    private var pending: [UInt8] = []
    private var started = false

    /// Creates a writer that hands armoured text to `output` (a file writer, standard output).
    public init(output: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.output = output
    }

    /// Armours `bytes`; whole lines reach the output at once, the rest waits for more.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var text: [UInt8] = []
        if !started {
            started = true
            text += Array(CofferArmor.beginLine.utf8) + [0x0A]
        }
        let lineBytes = CofferArmor.lineLength / 4 * 3
        var rest = bytes[...]
        if !pending.isEmpty {
            let taken = min(lineBytes - pending.count, rest.count)
            pending += rest.prefix(taken)
            rest = rest.dropFirst(taken)
            if pending.count == lineBytes {
                appendLines(of: pending[...], to: &text)
                pending.removeAll(keepingCapacity: true)
            }
        }
        let whole = rest.count / lineBytes * lineBytes
        // In pieces of 1,024 lines (64 KiB of text), so memory stays constant whatever `bytes` holds.
        var offset = rest.startIndex
        while offset < rest.startIndex + whole {
            let end = min(rest.startIndex + whole, offset + 1024 * lineBytes)
            appendLines(of: rest[offset..<end], to: &text)
            try flush(&text)
            offset = end
        }
        pending += rest[(rest.startIndex + whole)...]
        try flush(&text)
    }

    /// Writes the last line and the end line. An empty file is armoured as a begin and an end line.
    public func finish() throws {
        var text: [UInt8] = []
        if !started {
            started = true
            text += Array(CofferArmor.beginLine.utf8) + [0x0A]
        }
        if !pending.isEmpty {
            appendLines(of: pending[...], to: &text)
            pending = []
        }
        text += Array(CofferArmor.endLine.utf8) + [0x0A]
        try flush(&text)
    }

    private func appendLines(of bytes: some Collection<UInt8>, to text: inout [UInt8]) {
        let encoded = Array(Base64.encode(bytes).utf8)
        var offset = 0
        while offset < encoded.count {
            let end = min(encoded.count, offset + CofferArmor.lineLength)
            text += encoded[offset..<end]
            text.append(0x0A)
            offset = end
        }
    }

    private func flush(_ text: inout [UInt8]) throws {
        guard !text.isEmpty else { return }
        try text.withUnsafeBytes(output)
        text.removeAll(keepingCapacity: true)
    }
}

/// Reads armour from another source and yields the bytes it holds, checking every line as it goes
/// (docs/FORMAT-ENCRYPTION.md, "Armour"). Constant memory: a block of text and its decoding at a time.
final class ArmoredSource: ByteSource {
    private let text: any ByteSource
    /// Text read but not yet taken apart into lines.
    private var unread: [UInt8] = []
    private var decoded: [UInt8] = []
    private var decodedOffset = 0
    private var line = 0
    private var begun = false
    /// A short or padded line was read: only the end line may follow.
    private var sawLastDataLine = false
    private var ended = false
    private var textEnded = false

    /// Text read from the source at a time.
    private static let blockSize = 1 << 16
    /// The longest line kept while looking for its end: a data line is 64 characters (plus a CR and
    /// trailing blanks a reader tolerates).
    private static let longestLine = 256

    init(_ text: any ByteSource) {
        self.text = text
    }

    var sizeHint: Int64? { nil }

    func readPrefix(upTo count: Int) throws(CofferCoreError) -> [UInt8] {
        do {
            try fill(count)
        } catch let error as CofferCoreError {
            throw error
        } catch {
            // ByteSource's prefix read only throws core errors: an armour error travels inside one.
            throw CofferCoreError(.invalidArgument, (error as? CofferFormatsError)?.reason ?? "the armour cannot be read", underlying: error)
        }
        return take(min(count, available))
    }

    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        try forEachChunk(chunkSize: chunkSize) { chunk, _ in try body(chunk) }
    }

    func forEachChunk(chunkSize: Int, _ body: (UnsafeRawBufferPointer, Bool) throws -> Void) throws -> Int64 {
        var total: Int64 = 0
        while true {
            // One byte more than a chunk, to know whether the chunk is the last.
            try fill(chunkSize + 1)
            if available > chunkSize {
                try withDecoded(chunkSize) { try body($0, false) }
                total += Int64(chunkSize)
            } else {
                if available > 0 {
                    let count = available
                    try withDecoded(count) { try body($0, true) }
                    total += Int64(count)
                }
                return total
            }
        }
    }

    private var available: Int { decoded.count - decodedOffset }

    private func take(_ count: Int) -> [UInt8] {
        defer { consume(count) }
        return Array(decoded[decodedOffset..<decodedOffset + count])
    }

    private func withDecoded(_ count: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try decoded.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[decodedOffset..<decodedOffset + count]))
        }
        consume(count)
    }

    private func consume(_ count: Int) {
        decodedOffset += count
        if decodedOffset == decoded.count {
            decoded.removeAll(keepingCapacity: true)
            decodedOffset = 0
        } else if decodedOffset > 1 << 16 {
            decoded.removeFirst(decodedOffset)
            decodedOffset = 0
        }
    }

    /// Decodes until `count` bytes are available or the armour ended.
    private func fill(_ count: Int) throws {
        while available < count && !ended {
            if textEnded {
                throw malformed(begun ? "no end line '\(CofferArmor.endLine)': it is truncated" : "the input is empty")
            }
            let block = try text.readPrefix(upTo: Self.blockSize)
            textEnded = block.count < Self.blockSize
            unread += block
            try takeLines(atEnd: textEnded)
        }
    }

    /// Takes every complete line of `unread` apart (and the last, unterminated one at the end of the text).
    private func takeLines(atEnd: Bool) throws {
        var start = 0
        if !begun {
            start = try skipLeadingWhitespace()
            guard start >= 0 else { return }
        }
        var fullLines: [UInt8] = []
        defer { unread.removeFirst(start) }
        while start < unread.count {
            guard let newline = unread[start...].firstIndex(of: 0x0A) else {
                guard atEnd else {
                    if unread.count - start > Self.longestLine { throw malformed("line \(line + 1) is longer than \(CofferArmor.lineLength) characters") }
                    break
                }
                try takeLine(unread[start...], fullLines: &fullLines)
                start = unread.count
                break
            }
            try takeLine(unread[start..<newline], fullLines: &fullLines)
            start = newline + 1
            if ended {
                // After the end line, whitespace only, to the end of the text.
                guard unread[start...].allSatisfy(CofferArmor.isWhitespace) else {
                    throw malformed("line \(line + 1): there is text after the end line")
                }
                start = unread.count
            }
        }
        try decode(&fullLines)
        if ended && !atEnd {
            // Read what follows the end line, which must be whitespace.
            unread.removeAll()
            start = 0
            while true {
                let block = try text.readPrefix(upTo: Self.blockSize)
                guard block.allSatisfy(CofferArmor.isWhitespace) else { throw malformed("line \(line + 1): there is text after the end line") }
                if block.count < Self.blockSize { break }
            }
            textEnded = true
        }
    }

    /// Skips a byte order mark and whitespace, then checks the begin line; the offset after it, or -1
    /// when more text is needed.
    private func skipLeadingWhitespace() throws -> Int {
        var offset = unread.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while offset < unread.count && CofferArmor.isWhitespace(unread[offset]) { offset += 1 }
        guard offset <= CofferArmor.maximumLeadingWhitespace + 3 else {
            throw malformed("more than \(CofferArmor.maximumLeadingWhitespace) bytes of whitespace before the armour")
        }
        guard let newline = unread[offset...].firstIndex(of: 0x0A) else {
            if textEnded {
                guard offset < unread.count else { throw malformed("the input is empty") }
                throw malformed("line \(line + 1): expected '\(CofferArmor.beginLine)' on a line of its own")
            }
            if unread.count - offset > Self.longestLine { throw malformed("line \(line + 1): expected '\(CofferArmor.beginLine)'") }
            return -1
        }
        line = unread[..<offset].count { $0 == 0x0A } + 1
        guard trimmed(unread[offset..<newline]).elementsEqual(CofferArmor.beginLine.utf8) else {
            throw malformed("line \(line): expected '\(CofferArmor.beginLine)'")
        }
        begun = true
        return newline + 1
    }

    private func takeLine(_ raw: ArraySlice<UInt8>, fullLines: inout [UInt8]) throws {
        line += 1
        let content = trimmed(raw)
        if content.elementsEqual(CofferArmor.endLine.utf8) {
            try decode(&fullLines)
            ended = true
            return
        }
        guard !sawLastDataLine else {
            throw malformed("line \(line): expected '\(CofferArmor.endLine)' after the last, shorter line")
        }
        guard !content.isEmpty else { throw malformed("line \(line) is empty inside the armour") }
        guard content.count <= CofferArmor.lineLength else {
            throw malformed("line \(line) is longer than \(CofferArmor.lineLength) characters")
        }
        if content.count == CofferArmor.lineLength && !content.contains(UInt8(ascii: "=")) {
            guard content.allSatisfy(Self.isBase64) else { throw malformed("line \(line) has a character outside base64's alphabet") }
            // Whole lines are decoded together: no padding, so their concatenation decodes the same.
            fullLines += content
            if fullLines.count >= Self.blockSize { try decode(&fullLines) }
            return
        }
        try decode(&fullLines)
        sawLastDataLine = true
        try appendDecoded(content)
    }

    private func decode(_ fullLines: inout [UInt8]) throws {
        guard !fullLines.isEmpty else { return }
        try appendDecoded(fullLines[...])
        fullLines.removeAll(keepingCapacity: true)
    }

    private func appendDecoded(_ base64: ArraySlice<UInt8>) throws {
        do {
            decoded += try Base64.decode(String(decoding: base64, as: UTF8.self))
        } catch {
            throw malformed("line \(line) is not canonical base64 (\(error.reason))")
        }
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"): true
        default: false
        }
    }

    /// A line without its CR and trailing spaces or tabs.
    private func trimmed(_ raw: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var end = raw.endIndex
        while end > raw.startIndex, CofferArmor.isWhitespace(raw[end - 1]) { end -= 1 }
        return raw[raw.startIndex..<end]
    }

    private func malformed(_ reason: String) -> CofferFormatsError {
        CofferFormatsError(.malformedCiphertext, "armour: \(reason)")
    }
}
