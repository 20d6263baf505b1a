import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import CofferTestSupport
import CofferTesting
import Foundation
import HTTPTypes
import Testing

/// Registration proves possession (issue 42): a public key is registered only by a request its private
/// key signed, a key's record never changes behind its owner's back, and a token's check, the key's
/// look-up and insert and the token's use are one transaction. On SQLite and, when configured,
/// PostgreSQL with two instances sharing the database.
@Suite("Registration proves possession")
struct RegistrationProofTests {
    typealias Server = RegistrationServerTests
    typealias AllowList = AllowListTests
    typealias Backend = AllowListTests.Backend

    /// A PEM public key as a JSON string's content.
    static func jsonPEM(_ der: [UInt8]) -> String {
        PEMArmor.encode(der, label: "PUBLIC KEY").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The body of a `POST /register` for `key`.
    static func body(
        _ key: SigningKey, encryption: RecipientPublicKey? = nil, token: String? = nil, platform: String? = nil, algorithm: HTTPSignatureAlgorithm? = nil
    ) -> String {
        var fields = [#""publicKey": "\#(jsonPEM(key.verifyingKey.derRepresentation))""#]
        if let algorithm { fields.append(#""algorithm": "\#(algorithm.rawValue)""#) }
        if let encryption { fields.append(#""encryptionKey": "\#(jsonPEM(encryption.derRepresentation))""#) }
        if let token { fields.append(#""token": "\#(token)""#) }
        if let platform { fields.append(#""platform": "\#(platform)""#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// The id a Coffer server registers a public key under: `k_` and 16 bytes of its SPKI's SHA-256.
    static func registeredKeyID(_ key: SigningKey) -> String {
        "k_" + Hex.encode(key.verifyingKey.fingerprint.sha256.prefix(16))
    }

    /// `POST /register` with `json`, signed by `signer` as RFC 9421 and the server demand (method,
    /// target URI, content digest; created and a nonce), under `keyID`.
    static func signedRegistration(
        _ base: String, json: String, signer: SigningKey, keyID: String, algorithm: HTTPSignatureAlgorithm? = nil
    ) async throws -> Server.Reply {
        try await Server.send(AllowList.signed(.post, base, "/register", json: json, key: signer, keyID: keyID, algorithm: algorithm))
    }

    /// Registers `key` the way a client that proves possession does.
    static func register(
        _ key: SigningKey, at base: String, encryption: RecipientPublicKey? = nil, token: String? = nil, platform: String? = nil,
        algorithm: HTTPSignatureAlgorithm? = nil
    ) async throws -> Server.Reply {
        let json = body(key, encryption: encryption, token: token, platform: platform, algorithm: algorithm)
        return try await signedRegistration(base, json: json, signer: key, keyID: registeredKeyID(key), algorithm: algorithm)
    }

    static func dataKeyOptions(admin: SigningKey, registration: RegistrationMode = .open) throws -> RegistrationServer.Options {
        var options = AllowList.options(admin: admin, registration: registration)
        options.masterKey = try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))
        return options
    }

    /// The issue's reproduction: knowing only a device's public signing key, an attacker registered it
    /// first with their own encryption key, and the device's data key was then sealed to the attacker.
    /// Now the attacker's registration is refused for want of a proof, and the one signed by the key
    /// itself registers it.
    @Test(arguments: Backend.allCases)
    func aCopiedPublicKeyCannotBeRegisteredByAnyoneButItsHolder(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let admin = try SigningKey.generate(.ed25519)
            let options = try Self.dataKeyOptions(admin: admin)
            try await Server.withServer(store: first, options: options) { one in
                try await Server.withServer(store: second, options: options) { two in
                    let device = try SigningKey.generate(.p256)
                    let deviceIdentity = RecipientPrivateKey.generateX25519()
                    let attackerIdentity = RecipientPrivateKey.generateX25519()
                    let attacker = try SigningKey.generate(.p256)

                    // Unsigned, as a 1.0.0 client sent it: refused, and the problem says what to send.
                    let unsigned = try await Server.post(one, "/register", json: Self.body(device, encryption: attackerIdentity.publicKey))
                    #expect(unsigned.status == 401, "\(unsigned.text)")
                    #expect(unsigned.problem?.reason == "proof-required")
                    let detail = try #require(unsigned.problem?.detail)
                    #expect(detail.contains(Self.registeredKeyID(device)) && detail.contains("nonce") && detail.contains("content-digest"), "\(detail)")

                    // Signed by the attacker's own key, under the device's key id or the attacker's: refused.
                    let body = Self.body(device, encryption: attackerIdentity.publicKey)
                    let underDevicesID = try await Self.signedRegistration(two, json: body, signer: attacker, keyID: Self.registeredKeyID(device))
                    #expect(underDevicesID.status == 401 && underDevicesID.problem?.reason == "bad-signature", "\(underDevicesID.text)")
                    let underOwnID = try await Self.signedRegistration(two, json: body, signer: attacker, keyID: Self.registeredKeyID(attacker))
                    #expect(underOwnID.status == 401 && underOwnID.problem?.reason == "unknown-key", "\(underOwnID.text)")
                    #expect(try await first.key(id: Self.registeredKeyID(device)) == nil, "nothing was stored")

                    // The device, proving possession, registers with its own encryption key.
                    let registered = try await Self.register(device, at: two, encryption: deviceIdentity.publicKey)
                    #expect(registered.status == 201, "\(registered.text)")
                    let signer = HTTPMessageSigner(key: try HTTPSigningKey(device), keyID: Self.registeredKeyID(device))
                    let fetched = try await DataKeyClient(server: one, signer: signer, identity: deviceIdentity).fetch()
                    #expect(fetched.version == 1)
                    let asAttacker = try DataKeyClient(server: one, signer: signer, identity: attackerIdentity)
                    #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await asAttacker.fetch() } == "unexpected-answer")

                    // The same proof sent again is a replay.
                    let proof = try AllowList.signed(.post, one, "/register", json: Self.body(device), key: device, keyID: Self.registeredKeyID(device))
                    let once = try await Server.send(proof)
                    let twice = try await Server.send(proof)
                    #expect(once.status == 200 && twice.status == 401 && twice.problem?.reason == "replayed", "\(twice.text)")
                }
            }
        }
    }

    /// A registered key's record does not change behind its owner's back: registering it again with
    /// another encryption key (or one where it had none) is a conflict, never a silent `200`; the device
    /// adds or replaces its encryption key through its signed route, and the change is in its history.
    @Test(arguments: Backend.allCases)
    func aDeviceChangesItsEncryptionKeyOnlyThroughItsSignedRoute(backend: Backend) async throws {
        try await MasterKeyringTests.withStores(backend) { first, second, _ in
            let admin = try SigningKey.generate(.ed25519)
            let options = try Self.dataKeyOptions(admin: admin)
            try await Server.withServer(store: first, options: options) { one in
                try await Server.withServer(store: second, options: options) { two in
                    let device = try SigningKey.generate(.ed25519)
                    let keyID = Self.registeredKeyID(device)
                    #expect(try await Self.register(device, at: one).status == 201)
                    let identity = RecipientPrivateKey.generateX25519()
                    let signer = HTTPMessageSigner(key: try HTTPSigningKey(device), keyID: keyID)
                    let client = try DataKeyClient(server: one, signer: signer, identity: identity)
                    #expect(await DataKeyTests.refusal { () async throws(ServerClientError) in try await client.fetch() } == "no-encryption-key")

                    // Adding one by registering again: a conflict that names the route to use.
                    let readding = try await Self.register(device, at: two, encryption: identity.publicKey)
                    #expect(readding.status == 409 && readding.problem?.reason == "encryption-key-mismatch", "\(readding.text)")
                    #expect((readding.problem?.detail)?.contains("/encryption-key") == true)

                    // Through the signed route.
                    let json = #"{"encryptionKey": "\#(Self.jsonPEM(identity.publicKey.derRepresentation))"}"#
                    let set = try await Server.send(AllowList.signed(.post, two, "/encryption-key", json: json, key: device, keyID: keyID))
                    #expect(set.status == 200, "\(set.text)")
                    let identityID = KeyFingerprint(subjectPublicKeyInfo: identity.publicKey.derRepresentation).keyID
                    #expect(set.json["encryptionKeyId"] as? String == identityID && set.json["changed"] as? Bool == true, "\(set.text)")
                    let key = try await client.fetch()

                    // Registering again with the same encryption key, or none, changes nothing: 200.
                    #expect(try await Self.register(device, at: one, encryption: identity.publicKey).status == 200)
                    #expect(try await Self.register(device, at: one).status == 200)
                    // With another: 409, and the record keeps the device's key.
                    let other = RecipientPrivateKey.generateX25519()
                    #expect(try await Self.register(device, at: one, encryption: other.publicKey).status == 409)
                    #expect(DataKeyTests.bytes(try await client.fetch(version: key.version).key) == DataKeyTests.bytes(key.key))

                    // Replacing it through the route, once more: the history shows both changes.
                    let replace = #"{"encryptionKey": "\#(Self.jsonPEM(other.publicKey.derRepresentation))"}"#
                    #expect(try await Server.send(AllowList.signed(.post, one, "/encryption-key", json: replace, key: device, keyID: keyID)).status == 200)
                    let history = try await AllowList.admin(.get, one, "/admin/keys/\(keyID)/events", as: admin)
                    let kinds = (history.json["events"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
                    #expect(kinds == ["encryption-key", "encryption-key", "registered"], "\(history.text)")
                    let listed = try await AllowList.admin(.get, two, "/admin/keys", as: admin)
                    let entry = (listed.json["keys"] as? [[String: Any]] ?? []).first { $0["keyId"] as? String == keyID }
                    #expect(entry?["encryptionKeyId"] as? String == KeyFingerprint(subjectPublicKeyInfo: other.publicKey.derRepresentation).keyID)

                    // Unsigned, or signed by another registered key for this one: refused.
                    #expect(try await Server.post(one, "/encryption-key", json: json).status == 401)
                    let stranger = try SigningKey.generate(.ed25519)
                    #expect(try await Self.register(stranger, at: one).status == 201)
                    let asStranger = try await Server.send(AllowList.signed(.post, one, "/encryption-key", json: json, key: stranger, keyID: keyID))
                    #expect(asStranger.status == 401)
                }
            }
        }
    }

    /// One key registered by many copies of its request at once spends one use of the token; a
    /// registered key with a made-up token is answered as a new key with one; a token of N uses
    /// registers exactly N keys, whichever instance each request reaches.
    @Test(arguments: Backend.allCases)
    func tokenUsesAreSpentExactlyOncePerNewKey(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        guard let (first, second) = try await AllowList.stores(backend, in: folder) else { return }
        defer { Task { try? await first.close(); try? await second.close() } }
        let admin = try SigningKey.generate(.ed25519)
        let options = AllowList.options(admin: admin, registration: .token)
        try await Server.withServer(store: first, options: options) { one in
            try await Server.withServer(store: second, options: options) { two in
                // One key, eight copies at once (each its own proof), a token of four uses.
                let issued = try await AllowList.admin(.post, one, "/admin/tokens", json: #"{"uses": 4}"#, as: admin)
                let token = try #require(issued.json["token"] as? String, "\(issued.text)")
                let tokenID = try #require(issued.json["tokenId"] as? String)
                let key = try SigningKey.generate(.ed25519)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<8 {
                        group.addTask { try await Self.register(key, at: index % 2 == 0 ? one : two, token: token).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 201 }.count == 1 && statuses.filter { $0 == 200 }.count == 7, "\(statuses.sorted())")
                let listed = try await AllowList.admin(.get, one, "/admin/tokens", as: admin)
                let entry = (listed.json["tokens"] as? [[String: Any]] ?? []).first { $0["tokenId"] as? String == tokenID }
                #expect(entry?["usesLeft"] as? Int == 3, "\(listed.text)")

                // The registered key with a token that does not exist: refused as a new key would be.
                let madeUp = try await Self.register(key, at: two, token: "rt_made-up")
                #expect(madeUp.status == 403 && madeUp.problem?.reason == "invalid-token", "\(madeUp.text)")
                let newKey = try await Self.register(try SigningKey.generate(.ed25519), at: two, token: "rt_made-up")
                #expect(newKey.status == madeUp.status && newKey.problem?.reason == madeUp.problem?.reason)

                // Twelve new keys at once against a token of five uses: exactly five are registered.
                let five = try await AllowList.issueToken(two, admin: admin, json: #"{"uses": 5}"#)
                let keys = try (0..<12).map { _ in try SigningKey.generate(.ed25519) }
                let outcomes = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    for (index, key) in keys.enumerated() {
                        group.addTask { (Self.registeredKeyID(key), try await Self.register(key, at: index % 2 == 0 ? one : two, token: five).status) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let registered = outcomes.filter { $0.1 == 201 }
                #expect(registered.count == 5 && outcomes.filter { $0.1 == 403 }.count == 7, "\(outcomes.map(\.1).sorted())")
                for (keyID, status) in outcomes {
                    #expect((try await first.key(id: keyID) != nil) == (status == 201), "stored exactly when answered 201")
                }
            }
        }
    }

    /// A server behind a TLS-terminating proxy is told its clients sign `https` (`Options.scheme`); a
    /// device that signed its registration for `http://` is refused as before, nothing is stored, and the
    /// answer says that the scheme is the one difference and which setting states it.
    @Test func aRegistrationSignedForTheOtherSchemeIsRefusedAndTheAnswerSaysSo() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        var options = try Self.dataKeyOptions(admin: try SigningKey.generate(.ed25519))
        options.scheme = "https"
        try await Server.withServer(store: store, options: options) { base in
            let device = try SigningKey.generate(.p256)
            let refused = try await Self.register(device, at: base)   // base is http://127.0.0.1:port
            #expect(refused.status == 401 && refused.problem?.reason == "bad-signature", "\(refused.text)")
            let detail = refused.problem?.detail ?? ""
            #expect(detail.contains("one it carries verifies as a request to http://"), "\(detail)")
            #expect(detail.contains("server expects https"), "\(detail)")
            #expect(try await store.key(id: Self.registeredKeyID(device)) == nil, "nothing was stored")
        }
    }

    /// The outside attack on issue 42's fix: a PKCS#8 private key sent where a public key belongs was
    /// reduced to its public half and accepted (201, or 200 changed). The client is now told of its
    /// mistake, and nothing is stored.
    @Test func aPrivateKeyWhereAPublicKeyBelongsIsRefused() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let admin = try SigningKey.generate(.ed25519)
        try await Server.withServer(store: store, options: try Self.dataKeyOptions(admin: admin)) { base in
            func json(_ pem: String) -> String { pem.replacingOccurrences(of: "\n", with: "\\n") }
            let device = try SigningKey.generate(.p256)
            let privateX25519 = RecipientPrivateKey.generateX25519()

            // publicKey: the device's own private key, the request signed by it.
            let devicePEM = try device.pemRepresentation
            let asPublicKey = #"{"publicKey": "\#(json(devicePEM))"}"#
            let refused = try await Self.signedRegistration(base, json: asPublicKey, signer: device, keyID: Self.registeredKeyID(device))
            #expect(refused.status == 400 && refused.problem?.reason == "invalid-key", "\(refused.text)")
            #expect((refused.problem?.detail)?.contains("private key") == true, "\(refused.text)")

            // A private key beside the public one (the second outside attack: the readers took the first
            // block and passed over the rest), as PEM after it or as base64 DER before it.
            for text in [
                device.verifyingKey.pemRepresentation + (try device.pemRepresentation),
                Base64.encode(try device.pkcs8DERRepresentation) + "\n" + device.verifyingKey.pemRepresentation,
            ] {
                let beside = try await Self.signedRegistration(
                    base, json: #"{"publicKey": "\#(json(text))"}"#, signer: device, keyID: Self.registeredKeyID(device)
                )
                #expect(beside.status == 400 && beside.problem?.reason == "invalid-key", "\(beside.text)")
            }
            let p256Identity = RecipientPrivateKey.p256(.init())
            let besideEncryption = #"{"publicKey": "\#(Self.jsonPEM(device.verifyingKey.derRepresentation))", "encryptionKey": "\#(json(p256Identity.publicKey.pemRepresentation + p256Identity.pemRepresentation))"}"#
            let refusedBeside = try await Self.signedRegistration(base, json: besideEncryption, signer: device, keyID: Self.registeredKeyID(device))
            #expect(refusedBeside.status == 400 && refusedBeside.problem?.reason == "invalid-encryption-key", "\(refusedBeside.text)")

            // encryptionKey: an X25519 private key, at registration and through POST /encryption-key.
            let withPrivate = #"{"publicKey": "\#(Self.jsonPEM(device.verifyingKey.derRepresentation))", "encryptionKey": "\#(json(privateX25519.pemRepresentation))"}"#
            let atRegistration = try await Self.signedRegistration(base, json: withPrivate, signer: device, keyID: Self.registeredKeyID(device))
            #expect(atRegistration.status == 400 && atRegistration.problem?.reason == "invalid-encryption-key", "\(atRegistration.text)")
            #expect(try await store.keys(limit: 10).isEmpty, "nothing registered")

            #expect(try await Self.register(device, at: base).status == 201)
            let change = try await Server.send(
                AllowList.signed(
                    .post, base, "/encryption-key", json: #"{"encryptionKey": "\#(json(privateX25519.pemRepresentation))"}"#,
                    key: device, keyID: Self.registeredKeyID(device)
                )
            )
            #expect(change.status == 400 && change.problem?.reason == "invalid-encryption-key", "\(change.text)")
            #expect(try await store.key(id: Self.registeredKeyID(device))?.encryptionKey == nil, "no encryption key stored")
        }
    }
}
