import CofferCore
import Testing

/// `clipped(toUTF8:)`: quoting text someone else chose is bounded in bytes, whatever it is made of.
struct TextClippingTests {
    /// One "character" of `a` and 31,000 combining marks is 62 KB: a cut by characters (`prefix(80)`)
    /// keeps all of it, a cut by bytes keeps at most the bytes asked.
    @Test func combiningMarksCountInBytes() {
        let heavy = "a" + String(repeating: "\u{0301}", count: 31_000)
        #expect(String(heavy.prefix(80)).utf8.count == 62_001, "the mistake this guards against")
        #expect(heavy.clipped(toUTF8: 80).utf8.count == 79, "a, then 39 two-byte marks")
        #expect(Substring(heavy).clipped(toUTF8: 80) == heavy.clipped(toUTF8: 80))
    }

    /// A cut never splits a scalar, and text that fits comes back whole.
    @Test(arguments: [0, 1, 2, 3, 4, 5, 9, 10, 11, 100])
    func cutsOnlyBetweenScalars(limit: Int) {
        let text = "é€😀x" // 2, 3, 4 and 1 bytes
        let cut = text.clipped(toUTF8: limit)
        #expect(cut.utf8.count <= limit)
        #expect(text.unicodeScalars.starts(with: cut.unicodeScalars))
        let whole = [0, 2, 5, 9, 10]
        if let fits = whole.last(where: { $0 <= limit }) { #expect(cut.utf8.count == fits) }
    }
}
