import CCofferSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Writes to a file descriptor on a second thread, so that the kernel's cost of taking in the data
/// (copying it, allocating page-cache pages) overlaps with the work that produces it.
///
/// Bytes are copied into one of three staging buffers, or written there in place by a producer that
/// reserves room (``append(reserving:_:)``); a full buffer is handed to the writer thread and the next
/// one is filled meanwhile. The first write error stops the writing and is reported by the
/// next ``append(_:)`` or by `finish()`. The buffers are wiped before they are freed (they may hold
/// plaintext). For an output that will be flushed to disk at the end, each buffer's writeback starts as
/// soon as it is written (`sync_file_range`), so that the final `fsync` waits for the last few only.
final class BackgroundWriter: @unchecked Sendable {
    private let descriptor: Int32
    private let name: String
    private let capacity: Int
    private let buffers: [UnsafeMutableRawBufferPointer]
    /// How many bytes each staging buffer holds for the writer thread (-1: stop). The producer sets one
    /// entry while the writer thread reads another, so every access holds `lock`: a Swift array's
    /// elements may not be accessed from two threads at once, even different ones.
    private var counts: [Int]
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let lock = DispatchSemaphore(value: 1)
    private var failure: CofferCoreError?
    private var current: Int?
    private var fill = 0
    private var next = 0
    private var finished = false
    private let startsWriteback: Bool

    init(descriptor: Int32, name: String, capacity: Int = 2 << 20, startsWriteback: Bool = false) {
        self.descriptor = descriptor
        self.name = name
        self.startsWriteback = startsWriteback
        self.capacity = capacity
        self.buffers = (0..<3).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 64) }
        self.counts = [0, 0, 0]
        for _ in buffers { free.signal() }
        DispatchQueue.global(qos: .userInitiated).async { self.drain() }
    }

    private var recordedFailure: CofferCoreError? {
        withLock { failure }
    }

    private func withLock<T>(_ body: () -> T) -> T {
        lock.wait()
        defer { lock.signal() }
        return body()
    }

    private func drain() {
        var index = 0
        var offset: Int64 = 0
        while true {
            filled.wait()
            let count = withLock { counts[index] }
            if count < 0 { break }
            if recordedFailure == nil {
                do {
                    try writeAll(UnsafeRawBufferPointer(rebasing: buffers[index][0..<count]), to: descriptor, name: name)
                    // Best effort: where it is unsupported, the final fsync does all the work.
                    if startsWriteback { _ = coffer_start_writeback(descriptor, offset, Int64(count)) }
                    offset += Int64(count)
                } catch {
                    withLock { failure = error }
                }
            }
            free.signal()
            index = (index + 1) % buffers.count
        }
        done.signal()
    }

    /// Queues bytes for writing.
    func append(_ bytes: UnsafeRawBufferPointer) throws(CofferCoreError) {
        if let failure = recordedFailure { throw failure }
        var offset = 0
        while offset < bytes.count {
            let slot = currentSlot()
            let count = min(capacity - fill, bytes.count - offset)
            UnsafeMutableRawBufferPointer(rebasing: buffers[slot][fill..<(fill + count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
            fill += count
            offset += count
            if fill == capacity { submit() }
        }
    }

    /// Lends `body` `count` bytes of a staging buffer to write into in place, and queues the number of
    /// bytes it returns (at most `count`). Saves the copy that ``append(_:)`` makes, for producers that
    /// can put their output anywhere. If `body` throws, nothing it wrote is queued.
    func append(reserving count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        if let failure = recordedFailure { throw failure }
        guard count <= capacity else {
            // Larger than a staging buffer: fill a buffer of that size and copy it in.
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 64)
            defer {
                scratch.initializeMemory(as: UInt8.self, repeating: 0)
                scratch.deallocate()
            }
            let written = try body(scratch)
            precondition((0...count).contains(written), "the closure reported more bytes than it was lent")
            try append(UnsafeRawBufferPointer(rebasing: scratch[0..<written]))
            return
        }
        if current != nil && capacity - fill < count { submit() }
        let slot = currentSlot()
        let written = try body(UnsafeMutableRawBufferPointer(rebasing: buffers[slot][fill..<(fill + count)]))
        precondition((0...count).contains(written), "the closure reported more bytes than it was lent")
        fill += written
        if fill == capacity { submit() }
    }

    /// The staging buffer being filled, waiting for a free one (and starting it empty) if there is none.
    private func currentSlot() -> Int {
        if let current { return current }
        free.wait()
        let slot = next
        next = (next + 1) % buffers.count
        current = slot
        fill = 0
        return slot
    }

    private func submit() {
        guard let slot = current else { return }
        let fill = fill
        withLock { counts[slot] = fill }
        current = nil
        filled.signal()
    }

    /// Writes what is queued, stops the thread, and reports the first error.
    func finish() throws(CofferCoreError) {
        guard !finished else { return }
        finished = true
        submit()
        free.wait()
        let last = next
        withLock { counts[last] = -1 }
        filled.signal()
        done.wait()
        for buffer in buffers {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        if let failure = recordedFailure { throw failure }
    }

    deinit {
        try? finish()
    }
}
