import CofferCrypto
import CofferHTTPSignatures
import Foundation
import HTTPTypes

extension Speed {
    /// Signs and verifies a typical request in a loop, for each RFC 9421 algorithm.
    func measureHTTPSignatures(_ algorithms: [HTTPSignatureAlgorithm], afterTable: Bool) throws {
        if !json && afterTable { Terminal.writeLine("") }
        if !json { Terminal.writeLine(pad("http sign+verify", 20) + padLeft("per second", 14)) }
        let body = Array(#"{"email": "ada@example.com", "name": "Ada Lovelace"}"#.utf8)
        var template = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/register_user")
        template.headerFields[.contentType] = "application/json"
        let rsa = algorithms.contains(.rsaPSSSHA512) || algorithms.contains(.rsaV1_5SHA256) ? try SigningKey.generate(.rsa2048) : nil
        for algorithm in algorithms {
            let key: HTTPSigningKey = switch algorithm {
            case .hmacSHA256: .hmacSHA256(secret: try MACKey.generate())
            case .ecdsaP256SHA256: try HTTPSigningKey(SigningKey.generate(.p256))
            case .ecdsaP384SHA384: try HTTPSigningKey(SigningKey.generate(.p384))
            case .ed25519: try HTTPSigningKey(SigningKey.generate(.ed25519))
            case .rsaPSSSHA512, .rsaV1_5SHA256: try HTTPSigningKey(rsa ?? SigningKey.generate(.rsa2048), algorithm: algorithm)
            }
            let signer = HTTPMessageSigner(key: key, keyID: "app")
            let verifier = HTTPMessageVerifier(keys: HTTPStaticKeys(["app": key.verificationKey]), replayCache: nil)
            let template = template
            let result: (operations: Int, seconds: Double) = try runBlocking { [seconds] in
                let clock = ContinuousClock()
                let start = clock.now
                let end = start + .milliseconds(Int64(seconds * 1000))
                var operations = 0
                while clock.now < end {
                    for _ in 0..<16 {
                        var request = template
                        try signer.sign(&request, body: body)
                        _ = try await verifier.verify(request, body: body)
                        operations += 1
                    }
                }
                let elapsed = clock.now - start
                return (operations, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            let perSecond = Double(result.operations) / result.seconds
            if json {
                try JSONLines.write(SpeedRecord(algorithm: "http-" + algorithm.rawValue, blockBytes: body.count, operations: result.operations,
                                                seconds: result.seconds, operationsPerSecond: perSecond, bytesPerSecond: perSecond * Double(body.count)))
            } else {
                Terminal.writeLine(pad(algorithm.rawValue, 20) + padLeft(formatDecimal(perSecond, places: 0), 14))
            }
            Terminal.flushStandardOutput()
        }
    }
}
