#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// The buffers and signals a ``FileReader`` shares with its read-ahead thread.
///
/// Ownership of each slot passes between the two threads through the semaphores (`empty` counts
/// slots the reader may fill, `full` counts slots the consumer may read), so a slot is only ever
/// touched by one side at a time; that protocol is what makes the unchecked `Sendable` sound.
final class ReadAheadState: @unchecked Sendable {
    final class Slot: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
        var count = 0
        var error: (any Error)?

        init(chunkSize: Int) {
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        }
    }

    let slots: [Slot]
    // libdispatch traps if a semaphore is released holding less than its initial value, so every
    // semaphore starts at zero and `empty` is given its slots by `init`.
    let empty = DispatchSemaphore(value: 0)
    let full = DispatchSemaphore(value: 0)
    let producerDone = DispatchSemaphore(value: 0)
    let cancelled = Flag()

    init(chunkSize: Int, slots count: Int) {
        slots = (0..<count).map { _ in Slot(chunkSize: chunkSize) }
        for _ in 0..<count { empty.signal() }
    }

    func deallocate() {
        for slot in slots { slot.buffer.deallocate() }
    }
}

/// A boolean set by one thread and read by another, with the semaphores providing the ordering.
final class Flag: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value = false

    init() { pthread_mutex_init(lock, nil) }

    func load() -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return value
    }

    func store(_ newValue: Bool) {
        pthread_mutex_lock(lock)
        value = newValue
        pthread_mutex_unlock(lock)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }
}
