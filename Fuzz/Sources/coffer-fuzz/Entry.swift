#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The target chosen by `COFFER_FUZZ_TARGET`, resolved once. An unknown or missing name prints the
/// list and exits with status 2 (libFuzzer would otherwise report every input as passing).
let selectedTarget: FuzzTarget = {
    let name = getenv("COFFER_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget.all.first(where: { $0.name == name }) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: " ")
        printError("COFFER_FUZZ_TARGET must name one of: \(names) (found '\(name)')")
        exit(2)
    }
    return target
}()

/// libFuzzer calls this once before fuzzing. `COFFER_FUZZ_WRITE_SEEDS=DIR` writes every target's seed
/// inputs (made with Coffer's own writers) into DIR/<target>/ and exits.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    if let directory = getenv("COFFER_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) {
        do {
            try Seeds.write(into: directory)
            exit(0)
        } catch {
            printError("cannot write seeds: \(error)")
            exit(1)
        }
    }
    // Globals (ours and the libraries') are created lazily, on first use; created while an input runs,
    // libFuzzer's leak check would count them as that input's leaks. So create ours now and run the
    // target over its seeds once. What is allocated here lives for the process (Fuzz/lsan-suppressions.txt).
    Fixed.prepare()
    let seeds = (try? Seeds.all())?[selectedTarget.name] ?? []
    for seed in [[]] + seeds { selectedTarget.run(seed) }
    return 0
}

/// libFuzzer's entry point: one input. A crash, a sanitizer report, a timeout or an out-of-memory is a
/// finding; everything a parser answers with a thrown error is fine.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget.run(bytes)
    return 0
}

/// Writes a line to standard error.
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
