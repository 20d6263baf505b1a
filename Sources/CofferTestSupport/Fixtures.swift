import CofferCore
import CofferCrypto
import Crypto

/// Test data that needs no files checked in.
public enum Fixtures {
    /// `count` unpredictable bytes of test data (a file to encrypt, a stream to hash): the AES-GCM
    /// keystream of a fresh random key, a piece of up to 1 MiB per nonce. Not for keys: data only. The
    /// secure generator asks the kernel for 8 bytes a call (13 million calls for a 100 MiB fixture,
    /// seconds of a concurrency thread the other tests wait for); the keystream costs milliseconds.
    public static func randomBytes(count: Int) -> [UInt8] {
        let key = SymmetricKey(size: .bits256)
        let piece = 1 << 20
        let zeros = [UInt8](repeating: 0, count: min(piece, count))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var index: UInt32 = 0
        while bytes.count < count {
            let length = min(piece, count - bytes.count)
            // A nonce per piece (its index), so no two pieces share a keystream; sealing cannot fail
            // for a 12-byte nonce and a 256-bit key.
            let nonce = withUnsafeBytes(of: index.bigEndian) { Array(repeating: 0, count: 8) + $0 }
            guard let sealed = try? AES.GCM.seal(zeros[..<length], using: key, nonce: AES.GCM.Nonce(data: nonce)) else {
                preconditionFailure("AES-GCM refused a 12-byte nonce")
            }
            bytes += sealed.ciphertext
            index += 1
        }
        return bytes
    }

    /// The whole contents of a file. Test helpers read files through this rather than
    /// `Data(contentsOf:)`, which on Linux (swift-foundation in Swift 6.3) leaks a 4 KiB buffer for every
    /// empty file it reads (the zero-size path), and would fill AddressSanitizer runs with leak reports.
    public static func contents(ofFile path: String) throws -> [UInt8] {
        try FileReader.open(path).readAll(limit: .max) ?? []
    }
}
