import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

@Suite("Atomic file writing in place")
struct AtomicFileReservationTests {
    /// One step of a write sequence: copy bytes in, or reserve `reserve` bytes and report `fill` of them
    /// written (or throw).
    enum Step {
        case copy(Int)
        case fill(reserve: Int, fill: Int)
        case failingFill(reserve: Int)
    }

    struct Planted: Error {}

    /// Sizes around the background writer's 2 MiB staging buffers and the foreground writer's 1 MiB
    /// buffer, a reservation larger than a staging buffer, short fills and failing fills in between.
    static let steps: [Step] = [
        .copy(100), .fill(reserve: (1 << 20) + 256, fill: (1 << 20) + 256), .fill(reserve: (1 << 20) + 256, fill: 1000),
        .failingFill(reserve: 4096), .copy(0), .fill(reserve: 0, fill: 0), .fill(reserve: 2 << 20, fill: 2 << 20),
        .fill(reserve: (3 << 20) + 7, fill: (3 << 20) + 5), .failingFill(reserve: 3 << 20), .copy(3 << 20),
        .fill(reserve: 17, fill: 17), .fill(reserve: (2 << 20) - 117, fill: (2 << 20) - 117), .copy(1),
    ]

    @Test(arguments: [false, true])
    func reservedAndCopiedWritesLandInOrder(background: Bool) throws {
        let folder = try TemporaryDirectory()
        let target = folder.path("out")
        let writer = try AtomicFileWriter(destination: target, durable: false, background: background)
        var expected: [UInt8] = []
        var next: UInt8 = 0
        func pattern(_ count: Int) -> [UInt8] {
            defer { next &+= 1 }
            return [UInt8](repeating: next, count: count)
        }
        for step in Self.steps {
            switch step {
            case .copy(let count):
                let bytes = pattern(count)
                try writer.write(bytes)
                expected += bytes
            case .fill(let reserve, let fill):
                let bytes = pattern(fill)
                try writer.write(reserving: reserve) { buffer in
                    #expect(buffer.count == reserve)
                    buffer.copyBytes(from: bytes)
                    return fill
                }
                expected += bytes
            case .failingFill(let reserve):
                let junk = pattern(reserve)
                #expect(throws: Planted.self) {
                    try writer.write(reserving: reserve) { buffer in
                        buffer.copyBytes(from: junk)
                        throw Planted()
                    }
                }
            }
        }
        try writer.commit()
        let written = try Fixtures.contents(ofFile: target)
        #expect(written.count == expected.count)
        let intact = written == expected  // a Bool: Swift Testing would diff megabyte arrays for ever
        #expect(intact, "every reserved and copied write in order, failed fills left out")
    }

    @Test(arguments: [false, true])
    func failedFillThenAbandonLeavesNothing(background: Bool) throws {
        let folder = try TemporaryDirectory()
        let target = try folder.write("original", to: "file")
        do {
            let writer = try AtomicFileWriter(destination: target, overwrite: true, durable: false, background: background)
            try writer.write(reserving: 1 << 20) { buffer in
                buffer.initializeMemory(as: UInt8.self, repeating: 0x41)
                return buffer.count
            }
            #expect(throws: Planted.self) { try writer.write(reserving: 64) { _ in throw Planted() } }
            writer.abandon()
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "original")
        #expect(try folder.contents() == ["file"], "no temporary file is left behind")
    }
}
