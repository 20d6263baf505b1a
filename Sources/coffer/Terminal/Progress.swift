/// A one-line progress bar on standard error for long inputs.
///
/// It draws only when standard error is a terminal and the input is larger than
/// ``ProgressBar/threshold`` (64 MiB); otherwise every call is a no-op, so piped output stays clean.
/// Redraws are limited to ten a second.
final class ProgressBar {
    /// Inputs at or below this size finish too fast for a bar to help.
    static let threshold: Int64 = 64 << 20

    private let total: Int64
    private let label: String
    private let enabled: Bool
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant
    private var drewSomething = false

    /// - Parameters:
    ///   - total: the input's size, if known; unknown sizes (pipes) draw no bar.
    ///   - label: shown after the bar, usually the file name.
    init(total: Int64?, label: String) {
        self.total = total ?? 0
        self.label = label
        self.enabled = Terminal.standardErrorIsTerminal && (total ?? 0) > Self.threshold
        self.start = clock.now
        self.lastDraw = start
    }

    /// Reports that `done` bytes have been processed.
    func update(_ done: Int64) {
        guard enabled else { return }
        let now = clock.now
        guard now - lastDraw >= .milliseconds(100) || done >= total else { return }
        lastDraw = now
        draw(done: done, elapsed: now - start)
    }

    /// Erases the bar so that the next output starts on a clean line.
    func finish() {
        guard enabled, drewSomething else { return }
        Terminal.writeError("\r\u{1B}[2K")
    }

    private func draw(done: Int64, elapsed: Duration) {
        drewSomething = true
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let percent = Int(fraction * 100)
        let remaining = rate > 0 ? Double(total - done) / rate : 0
        let eta = rate > 0 && done < total ? " ETA \(Int(remaining.rounded(.up)))s" : ""
        Terminal.writeError(
            "\r\u{1B}[2K[\(bar)] \(percent)% \(formatBytes(done))/\(formatBytes(total)) \(formatBytes(Int64(rate)))/s\(eta) \(label)"
        )
    }
}

/// Bytes in binary units, one decimal: "512 B", "1.5 MiB", "2.0 GiB".
func formatBytes(_ count: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    if unit == 0 { return "\(count) B" }
    return "\(formatDecimal(value, places: 1)) \(units[unit])"
}

/// A number with a fixed count of decimals, without Foundation's formatters.
func formatDecimal(_ value: Double, places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (value * scale).rounded()
    let whole = Int64(scaled / scale)
    var fraction = String(Int64(abs(scaled).truncatingRemainder(dividingBy: scale)))
    guard places > 0 else { return String(whole) }
    while fraction.count < places { fraction = "0" + fraction }
    return "\(value < 0 && whole == 0 ? "-" : "")\(whole).\(fraction)"
}
