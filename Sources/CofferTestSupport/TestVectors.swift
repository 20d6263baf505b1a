public import Foundation

/// External test vectors kept in the package under `Tests/Vectors`, each suite with its README and licence.
public enum TestVectors {
    /// The URL of a vector file, given relative to `Tests/Vectors`.
    ///
    /// The folder is found from this source file's location, so it works from any clone of the package.
    public static func url(_ relativePath: String) -> URL {
        URL(fileURLWithPath: "\(#filePath)")
            .deletingLastPathComponent()  // TestVectors.swift -> CofferTesting
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("Tests/Vectors")
            .appendingPathComponent(relativePath)
    }

    /// Decodes a JSON vector file into `type`.
    public static func load<Value: Decodable>(_ type: Value.Type, from relativePath: String) throws -> Value {
        let data = try Data(contentsOf: url(relativePath))
        return try JSONDecoder().decode(Value.self, from: data)
    }
}

/// The parts of a Wycheproof `MacTest` file (schema `mac_test_schema_v1.json`) that Coffer's tests read.
public struct WycheproofMACFile: Decodable, Sendable {
    public let algorithm: String
    public let numberOfTests: Int
    public let testGroups: [Group]

    public struct Group: Decodable, Sendable {
        public let keySize: Int
        public let tagSize: Int
        public let tests: [Test]
    }

    public struct Test: Decodable, Sendable {
        public let tcId: Int
        public let comment: String
        public let key: String
        public let msg: String
        public let tag: String
        public let result: String
        public let flags: [String]
    }
}

/// The parts of a Wycheproof signature-verification file (ECDSA DER and P1363, EdDSA, RSA PKCS#1 v1.5
/// and PSS; schemas `*_verify_schema_v1.json`) that Coffer's tests read.
public struct WycheproofSignatureFile: Decodable, Sendable {
    public let algorithm: String
    public let numberOfTests: Int
    public let testGroups: [Group]

    public struct Group: Decodable, Sendable {
        public let type: String
        /// The SubjectPublicKeyInfo DER, hex.
        public let publicKeyDer: String
        /// "SHA-256", "SHA-384", "SHA-512"; absent for EdDSA.
        public let sha: String?
        public let sLen: Int?
        public let mgfSha: String?
        public let tests: [Test]
    }

    public struct Test: Decodable, Sendable {
        public let tcId: Int
        public let comment: String
        public let msg: String
        public let sig: String
        public let result: String
        public let flags: [String]
    }
}

/// Wycheproof AEAD (`aead_test_schema_v1.json`) and IND-CPA (`ind_cpa_test_schema_v1.json`) files.
public struct WycheproofCipherFile: Decodable, Sendable {
    public let numberOfTests: Int
    public let testGroups: [Group]

    public struct Group: Decodable, Sendable {
        public let keySize: Int
        public let ivSize: Int
        public let tagSize: Int?
        public let tests: [Test]
    }

    public struct Test: Decodable, Sendable {
        public let tcId: Int
        public let comment: String
        public let key: String
        public let iv: String
        public let aad: String?
        public let msg: String
        public let ct: String
        public let tag: String?
        public let result: String
    }
}
