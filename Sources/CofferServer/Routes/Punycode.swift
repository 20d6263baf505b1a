/// Punycode's decoding (RFC 3492, section 6.2), for the `xn--` labels of a domain: what
/// ``UserFields/emailKey(_:)`` compares addresses by reads `xn--bcher-kva.example` as `bücher.example`.
/// Held to the RFC's sample strings (`PunycodeTests`).
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700, initialBias = 72, initialN = 128

    /// The most bytes of a label decoded: a DNS label's 63, so that decoding is bounded.
    static let maximumLabelBytes = 63

    /// The Unicode text `encoded` (a label without its `xn--`) stands for; nil when it is not valid
    /// Punycode: a byte outside ASCII, a digit out of range, a value overflowing, a code point that is a
    /// surrogate or beyond U+10FFFF, or more than ``maximumLabelBytes`` bytes.
    static func decode<Bytes: Collection>(_ encoded: Bytes) -> String? where Bytes.Element == UInt8 {
        let bytes = Array(encoded)
        guard bytes.count <= maximumLabelBytes, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        var output: [UInt32] = []
        var extended = bytes[...]
        if let delimiter = bytes.lastIndex(of: UInt8(ascii: "-")) {
            output = bytes[..<delimiter].map(UInt32.init)
            extended = bytes[(delimiter + 1)...]
        }
        var n = initialN, i = 0, bias = initialBias
        var position = extended.startIndex
        while position < extended.endIndex {
            let previous = i
            var weight = 1
            var k = base
            while true {
                guard position < extended.endIndex, let digit = digit(extended[position]) else { return nil }
                position += 1
                guard digit <= (Int(Int32.max) - i) / weight else { return nil }
                i += digit * weight
                let threshold = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < threshold { break }
                guard weight <= Int(Int32.max) / (base - threshold) else { return nil }
                weight *= base - threshold
                k += base
            }
            let count = output.count + 1
            bias = adapt(i - previous, count: count, first: previous == 0)
            guard i / count <= Int(Int32.max) - n else { return nil }
            n += i / count
            i %= count
            guard n <= 0x10FFFF, !(0xD800...0xDFFF).contains(n) else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        var text = String.UnicodeScalarView()
        for value in output {
            guard let scalar = Unicode.Scalar(value) else { return nil }
            text.append(scalar)
        }
        return String(text)
    }

    /// RFC 3492, section 6.1.
    private static func adapt(_ delta: Int, count: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + ((base - tMin + 1) * delta) / (delta + skew)
    }

    /// A digit's value: `a`–`z` (either case) 0–25, `0`–`9` 26–35.
    private static func digit(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x61...0x7A: Int(byte - 0x61)
        case 0x41...0x5A: Int(byte - 0x41)
        case 0x30...0x39: Int(byte - 0x30) + 26
        default: nil
        }
    }
}
