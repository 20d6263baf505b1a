import ArgumentParser
import CofferCore
import CofferCrypto
import CofferFormats

struct KDFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kdf",
        abstract: "Tune password key derivation for this machine.",
        subcommands: [KDFCalibrate.self]
    )
}

struct KDFCalibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Find the scrypt and PBKDF2 costs that take a given time here.",
        discussion: """
            Measures scrypt (r=8, p=1) at growing N and PBKDF2-HMAC-SHA-256, then prints the costs that \
            take about --target-ms milliseconds (1000 by default) on this machine, ready for \
            'coffer encrypt --scrypt-log-n' and '--iterations'. Slower is stronger: an attacker pays the \
            same price per guess. Suggestions stop at what readers open by default (scrypt 2^19, \
            2,000,000 PBKDF2 iterations).

            Example:
              coffer kdf calibrate --target-ms 500
            """
    )

    @Option(help: ArgumentHelp("The time one derivation should take.", valueName: "ms"))
    var targetMs: Int = 1000

    func validate() throws {
        guard (10...60_000).contains(targetMs) else { throw ValidationError("--target-ms must be from 10 to 60000, found \(targetMs)") }
    }

    func run() throws {
        let clock = ContinuousClock()
        func milliseconds(_ work: () throws -> Void) rethrows -> Double {
            let start = clock.now
            try work()
            let elapsed = (clock.now - start).components
            return Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
        }
        let password = Array("calibration".utf8)
        let salt = try SecureRandom.bytes(count: 16)

        Terminal.writeLine("scrypt (r=8, p=1):")
        // Only costs that readers open with their default limits: what encrypt would refuse to write is
        // not suggested.
        let readable = PasswordKDFLimits()
        var chosen = 14
        for logN in 14...22 where readable.admits(.scrypt(logN: logN, r: 8, p: 1)) {
            let time = try milliseconds { _ = try PasswordKDF.scrypt(logN: logN, r: 8, p: 1).derive(password: password, salt: salt, limits: .unbounded) }
            Terminal.writeLine("  log2 N = \(logN)  \(formatBytes(Int64(128 * 8) << logN)) of memory  \(formatDecimal(time, places: 0)) ms")
            Terminal.flushStandardOutput()
            if time <= Double(targetMs) { chosen = logN }
            if time > Double(targetMs) * 1.5 { break }
        }
        let sample = 200_000
        let pbkdf2Time = try milliseconds { _ = try PasswordKDF.pbkdf2(iterations: sample).derive(password: password, salt: salt) }
        let perMs = Double(sample) / pbkdf2Time
        let iterations = min(
            readable.maximumPBKDF2Iterations,
            max(PasswordKDF.minimumPBKDF2Iterations, Int((perMs * Double(targetMs) / 10_000).rounded()) * 10_000)
        )
        Terminal.writeLine("PBKDF2-HMAC-SHA-256: \(formatDecimal(perMs * 1000, places: 0)) iterations/s")
        Terminal.writeLine("")
        Terminal.writeLine("for about \(targetMs) ms per derivation:")
        Terminal.writeLine("  coffer encrypt --kdf scrypt --scrypt-log-n \(chosen) …")
        Terminal.writeLine("  coffer encrypt --kdf pbkdf2 --iterations \(iterations) …")
    }
}
