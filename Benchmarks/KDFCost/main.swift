import CofferCrypto
import Foundation

// What a password header can make a reader do, as Coffer derives it (`PasswordKDF.derive`): the default
// derivation beside the most costly ones the default `PasswordKDFLimits` accept, each the median of
// ROUNDS interleaved rounds, and its ratio to the default from the same rounds (docs/PERFORMANCE.md,
// issue 42). `swift run -c release kdf-cost [ROUNDS]`.
let rounds = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 5
let password = Array("correct horse".utf8)
let salt = [UInt8](repeating: 7, count: 16)
let limits = PasswordKDFLimits()

// The most costly headers the defaults admit, read from the limits: scrypt's whole work at r = 8 in one
// lane (the most memory too), or spread over more lanes with less memory; PBKDF2 at the iteration limit
// with each hash and output length a reader derives.
let work = limits.maximumScryptWork
let topLogN = Int.bitWidth - 1 - (work / 8).leadingZeroBitCount
let iterations = limits.maximumPBKDF2Iterations
var cases: [(String, PasswordKDF, Int)] = [("default: \(PasswordKDF.default)", .default, 32)]
for logN in [topLogN, 17, 14, 10] where logN <= topLogN {
    let kdf = PasswordKDF.scrypt(logN: logN, r: 8, p: work / (8 << logN))
    cases.append(("\(kdf)\(logN == topLogN ? ", the most memory admitted" : "")", kdf, 32))
}
cases += [
    ("PBKDF2-HMAC-SHA-512, \(iterations) iterations, 32 bytes (PKCS #8)", .pbkdf2(.hmacSHA512, iterations: iterations), 32),
    ("PBKDF2-HMAC-SHA-256, \(iterations) iterations, 48 bytes (openssl enc)", .pbkdf2(iterations: iterations), 48),
    ("PBKDF2-HMAC-SHA-1, \(iterations) iterations, 32 bytes (PKCS #8, AES-256)", .pbkdf2(.hmacSHA1, iterations: iterations), 32),
]
for (_, kdf, _) in cases { precondition(limits.admits(kdf), "\(kdf) is not admitted by the default limits") }

let clock = ContinuousClock()
var times = [[Double]](repeating: [], count: cases.count)
for _ in 0..<rounds {
    for (index, (_, kdf, bytes)) in cases.enumerated() {
        let start = clock.now
        _ = try kdf.derive(password: password, salt: salt, byteCount: bytes, limits: limits)
        let elapsed = (clock.now - start).components
        times[index].append(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let reference = median(times[0])
for (index, (label, _, _)) in cases.enumerated() {
    let value = median(times[index])
    let figures = String(format: "%7.3f s  %4.1fx the default  (%.3f–%.3f s)", value, value / reference, times[index].min() ?? 0, times[index].max() ?? 0)
    print(label.padding(toLength: 72, withPad: " ", startingAt: 0) + figures)
}
