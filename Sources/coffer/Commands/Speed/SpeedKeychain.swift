import CofferCore
import CofferCrypto
import CofferKeychain
import Foundation

extension Speed {
    /// `coffer speed keychain`: the keychain's targets measured on a temporary store (deleted after).
    func measureKeychain(items count: Int, afterTable: Bool) throws {
        guard (1_000...10_000_000).contains(count) else { throw CommandFailure("--keychain-items must be from 1000 to 10000000") }
        if !json && afterTable { Terminal.writeLine("") }
        let folder = NSTemporaryDirectory() + "coffer-speed-keychain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clock = ContinuousClock()
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let password = "speed-test password"
        let keychain = try Keychain.open(at: folder + "/keychain.db", create: true)
        try keychain.create(password: password)

        // Fill in batches of 10,000 (one transaction each).
        let secret = Array("a secret of typical token length, 48 bytes long!".utf8)
        let fill = try clock.measure {
            for start in stride(from: 0, to: count, by: 10_000) {
                let batch = (start..<min(count, start + 10_000)).map {
                    (item: KeychainItem.genericPassword(service: "com.example.speed", account: "user\($0)@example.com"), secret: secret)
                }
                try keychain.add(contentsOf: batch)
            }
        }

        // Reads by service and account, random accounts.
        var generator = SystemRandomNumberGenerator()
        var reads = 0
        let readTime = try clock.measure {
            let end = clock.now + .seconds(self.seconds)
            while clock.now < end {
                for _ in 0..<64 {
                    let account = "user\(Int.random(in: 0..<count, using: &generator))@example.com"
                    _ = try keychain.secret(matching: .genericPassword(service: "com.example.speed", account: account))
                }
                reads += 64
            }
        }

        // Durable adds: each its own transaction, flushed before add returns.
        let adds = 1_000
        let addTime = try clock.measure {
            for index in 0..<adds {
                try keychain.add(.genericPassword(service: "com.example.speed.adds", account: "new\(index)"), secret: secret)
            }
        }

        // Listing every item's attributes.
        var listed = 0
        let listTime = try clock.measure { listed = try keychain.items(matching: .genericPassword()).count }

        // Unlock against the KDF alone.
        keychain.lock()
        let unlockTime = try clock.measure { try keychain.unlock(password: password) }
        let scryptTime = try clock.measure {
            _ = try PasswordKDF.default.derive(password: Array(password.utf8), salt: [UInt8](repeating: 1, count: 16))
        }

        let results: [(String, Double, String)] = [
            ("keychain fill", Double(count) / seconds(fill), "items/s (batches of 10,000)"),
            ("keychain read", Double(reads) / seconds(readTime), "reads/s by service+account, \(count) items"),
            ("keychain add", Double(adds) / seconds(addTime), "durable adds/s"),
            ("keychain list", seconds(listTime) * 1000, "ms to list \(listed) items"),
            ("keychain unlock", seconds(unlockTime) * 1000, "ms (scrypt N=2^17 alone: \(formatDecimal(seconds(scryptTime) * 1000, places: 0)) ms)"),
        ]
        for (name, value, unit) in results {
            if json {
                try JSONLines.write(KDFSpeedRecord(algorithm: name.replacingOccurrences(of: " ", with: "-"), unit: unit, rate: value))
            } else {
                Terminal.writeLine(pad(name, 20) + padLeft(formatDecimal(value, places: 0), 14) + " " + unit)
            }
            Terminal.flushStandardOutput()
        }
    }
}
