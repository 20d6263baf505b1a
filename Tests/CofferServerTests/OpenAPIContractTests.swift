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
import NIOCore
import Testing

/// docs/openapi.yaml is the server's contract (issue 22): every answer a running server gives here fits
/// what the document says of it (status, content type, required headers, body schema), and every
/// route and status the document lists is seen at least once. A status the document lists that no
/// request here provokes fails the test as surely as an undocumented one.
@Suite("OpenAPI contract")
struct OpenAPIContractTests {
    typealias Server = RegistrationServerTests

    /// Sends requests and checks each answer against the document.
    actor Contract {
        let document: OpenAPIDocument
        private(set) var seen: Set<String> = []

        init(_ document: OpenAPIDocument) { self.document = document }

        struct Answer {
            let status: Int
            let json: JSONValue?
        }

        /// Sends `method path` (whose template in the document is `template`), signed by `signer` when
        /// there is one, and checks the answer; `expect` is the status the scenario means to provoke.
        @discardableResult
        func send(
            _ method: HTTPRequest.Method, _ template: String, path: String? = nil, to base: String, body: [UInt8] = [],
            contentType: String? = "application/json", signer: HTTPMessageSigner? = nil, expect: Int,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> Answer {
            let url = try #require(URL(string: base))
            var head = HTTPRequest(method: method, scheme: "http", authority: "\(url.host ?? ""):\(url.port ?? 80)", path: path ?? template)
            if !body.isEmpty, let contentType { head.headerFields[.contentType] = contentType }
            if let signer { try signer.sign(&head, body: body) }
            let response = try await HTTPClient.shared.execute(try HTTPClient.clientRequest(head, body: body), timeout: .seconds(120))
            let bytes = Array(try await response.body.collect(upTo: 1 << 20).readableBytesView)
            let status = Int(response.status.code)
            var headers: [String: String] = [:]
            for header in response.headers { headers[header.name.lowercased()] = header.value }
            let what = "\(method.rawValue) \(path ?? template) → \(status) \(String(decoding: bytes.prefix(300), as: UTF8.self))"
            #expect(status == expect, "\(what); expected \(expect)", sourceLocation: sourceLocation)
            let problems = document.problems(
                method: method.rawValue, path: template, status: status, contentType: headers["content-type"], headers: headers, body: bytes
            )
            #expect(problems.isEmpty, "\(what): \(problems.joined(separator: "; "))", sourceLocation: sourceLocation)
            seen.insert("\(method.rawValue) \(template) \(status)")
            return Answer(status: status, json: try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)))
        }
    }

    static func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A registration's signer: the key it registers, under the id it is registered as.
    static func proof(_ key: SigningKey, algorithm: HTTPSignatureAlgorithm? = nil) throws -> HTTPMessageSigner {
        HTTPMessageSigner(key: try HTTPSigningKey(key, algorithm: algorithm), keyID: key.verifyingKey.fingerprint.registeredKeyID)
    }

    static func pem(_ der: [UInt8]) -> String {
        PEMArmor.encode(der, label: "PUBLIC KEY").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The signer for a signed route: the admin's for `/admin/…`, the device's otherwise.
    struct Signers {
        let admin: HTTPMessageSigner
        let device: HTTPMessageSigner
        func `for`(_ template: String) -> HTTPMessageSigner { template.hasPrefix("/admin/") ? admin : device }
    }

    /// A template's path with its parameters filled in.
    static func path(_ template: String, keyID: String, tokenID: String) -> String {
        template.replacingOccurrences(of: "{keyId}", with: keyID).replacingOccurrences(of: "{tokenId}", with: tokenID)
    }

    @Test func everyDocumentedAnswerIsGivenAndEveryAnswerIsDocumented() async throws {
        let document = try OpenAPIDocument()
        let contract = Contract(document)
        let adminKey = try SigningKey.generate(.ed25519)
        let admin = HTTPMessageSigner(key: try HTTPSigningKey(adminKey), keyID: adminKey.verifyingKey.fingerprint.keyID)
        let identity = RecipientPrivateKey.generateX25519()
        let deviceKey = try SigningKey.generate(.ed25519)

        // The main server: registration by token, data keys, no rate limits.
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        var options = try DataKeyTests.options(admin: adminKey, masterKey: try SecureRandom.bytes(count: 32))
        options.registration = .token
        options.signatureFailuresPerMinute = nil
        try await Server.withServer(store: store, options: options) { base in
            try await contract.send(.get, "/health", to: base, expect: 200)
            try await contract.send(.get, "/ready", to: base, expect: 200)

            // Registration.
            try await contract.send(.post, "/register", to: base, body: Self.json("{}"), expect: 403)
            let issued = try await contract.send(.post, "/admin/tokens", to: base, body: Self.json(#"{"uses": 5, "platform": "ios"}"#), signer: admin, expect: 201)
            let token = try #require(issued.json?["token"]?.string)
            let tokenID = try #require(issued.json?["tokenId"]?.string)
            let deviceBody = Self.json(#"{"publicKey": "\#(Self.pem(deviceKey.verifyingKey.derRepresentation))", "encryptionKey": "\#(Self.pem(identity.publicKey.derRepresentation))", "token": "\#(token)", "platform": "ios"}"#)
            // Unsigned: no proof that the caller holds the key.
            try await contract.send(.post, "/register", to: base, body: deviceBody, expect: 401)
            let proof = try Self.proof(deviceKey)
            let registered = try await contract.send(.post, "/register", to: base, body: deviceBody, signer: proof, expect: 201)
            try await contract.send(.post, "/register", to: base, body: deviceBody, signer: proof, expect: 200)
            let deviceID = try #require(registered.json?["keyId"]?.string)
            let signers = Signers(admin: admin, device: HTTPMessageSigner(key: try HTTPSigningKey(deviceKey), keyID: deviceID))
            let rsa = try SigningKey.generate(.rsa2048)
            let rsaPEM = Self.pem(rsa.verifyingKey.derRepresentation)
            try await contract.send(.post, "/register", to: base, body: Self.json(#"{"publicKey": "\#(rsaPEM)", "algorithm": "rsa-pss-sha512", "token": "\#(token)", "platform": "ios"}"#), signer: try Self.proof(rsa, algorithm: .rsaPSSSHA512), expect: 201)
            try await contract.send(.post, "/register", to: base, body: Self.json(#"{"publicKey": "\#(rsaPEM)", "algorithm": "rsa-v1_5-sha256", "token": "\#(token)", "platform": "ios"}"#), signer: try Self.proof(rsa, algorithm: .rsaV1_5SHA256), expect: 409)
            let plainKey = try SigningKey.generate(.p256)
            let plain = try await contract.send(.post, "/register", to: base, body: Self.json(#"{"publicKey": "\#(Self.pem(plainKey.verifyingKey.derRepresentation))", "token": "\#(token)", "platform": "ios"}"#), signer: try Self.proof(plainKey), expect: 201)
            let plainID = try #require(plain.json?["keyId"]?.string)
            let plainSigner = HTTPMessageSigner(key: try HTTPSigningKey(plainKey), keyID: plainID)

            // Users.
            let user = Self.json(#"{"email": "ada@example.com", "name": "Ada"}"#)
            try await contract.send(.post, "/register_user", to: base, body: user, signer: signers.device, expect: 201)
            try await contract.send(.post, "/register_user", to: base, body: user, signer: signers.device, expect: 409)

            // The device's encryption key: set (here, to the one it has), or refused when it is not a key.
            let sameKey = Self.json(#"{"encryptionKey": "\#(Self.pem(identity.publicKey.derRepresentation))"}"#)
            try await contract.send(.post, "/encryption-key", to: base, body: sameKey, signer: signers.device, expect: 200)
            try await contract.send(.post, "/encryption-key", to: base, body: Self.json(#"{"encryptionKey": "not a key"}"#), signer: signers.device, expect: 400)

            // Data keys.
            try await contract.send(.post, "/data-keys", to: base, body: Self.json("{}"), signer: signers.device, expect: 200)
            try await contract.send(.post, "/data-keys/rotate", to: base, signer: signers.device, expect: 200)
            try await contract.send(.post, "/data-keys", to: base, body: Self.json(#"{"version": 99}"#), signer: signers.device, expect: 404)
            try await contract.send(.post, "/data-keys", to: base, signer: plainSigner, expect: 409)
            try await contract.send(.post, "/data-keys/rotate", to: base, signer: plainSigner, expect: 409)
            try await contract.send(.post, "/admin/data-keys/{keyId}/rotate", path: "/admin/data-keys/\(deviceID)/rotate", to: base, signer: admin, expect: 200)
            try await contract.send(.post, "/admin/data-keys/{keyId}/rotate", path: "/admin/data-keys/k_unknown/rotate", to: base, signer: admin, expect: 404)
            try await contract.send(.post, "/admin/data-keys/{keyId}/retire", path: "/admin/data-keys/\(deviceID)/retire", to: base, body: Self.json(#"{"minVersion": 2}"#), signer: admin, expect: 200)
            try await contract.send(.post, "/admin/data-keys/{keyId}/retire", path: "/admin/data-keys/k_unknown/retire", to: base, body: Self.json(#"{"minVersion": 1}"#), signer: admin, expect: 404)
            try await contract.send(.post, "/data-keys", to: base, body: Self.json(#"{"version": 1}"#), signer: signers.device, expect: 410)

            // The allow-list.
            try await contract.send(.get, "/admin/keys", to: base, signer: admin, expect: 200)
            try await contract.send(.get, "/admin/keys/{keyId}/events", path: "/admin/keys/\(deviceID)/events", to: base, signer: admin, expect: 200)
            try await contract.send(.get, "/admin/keys/{keyId}/events", path: "/admin/keys/k_unknown/events", to: base, signer: admin, expect: 404)
            try await contract.send(.get, "/admin/users", to: base, signer: admin, expect: 200)
            try await contract.send(.get, "/admin/users", path: "/admin/users?email=ADA%40example.com", to: base, signer: admin, expect: 200)
            try await contract.send(.get, "/admin/tokens", to: base, signer: admin, expect: 200)
            for action in ["disable", "enable", "revoke"] {
                let template = "/admin/keys/{keyId}/\(action)"
                try await contract.send(.post, template, path: "/admin/keys/\(plainID)/\(action)", to: base, signer: admin, expect: 200)
                try await contract.send(.post, template, path: "/admin/keys/k_unknown/\(action)", to: base, signer: admin, expect: 404)
            }
            try await contract.send(.post, "/admin/keys/{keyId}/enable", path: "/admin/keys/\(plainID)/enable", to: base, signer: admin, expect: 409)
            try await contract.send(.post, "/admin/keys/{keyId}/disable", path: "/admin/keys/\(plainID)/disable", to: base, signer: admin, expect: 409)
            try await contract.send(.post, "/admin/keys/{keyId}/user", path: "/admin/keys/\(deviceID)/user", to: base, body: Self.json(#"{"userId": 1, "email": "ada@example.com"}"#), signer: admin, expect: 200)
            try await contract.send(.post, "/admin/keys/{keyId}/user", path: "/admin/keys/\(deviceID)/user", to: base, body: Self.json(#"{"userId": 999, "email": "ada@example.com"}"#), signer: admin, expect: 404)
            try await contract.send(.post, "/admin/tokens/{tokenId}/revoke", path: "/admin/tokens/\(tokenID)/revoke", to: base, signer: admin, expect: 200)
            try await contract.send(.post, "/admin/tokens/{tokenId}/revoke", path: "/admin/tokens/t_unknown/revoke", to: base, signer: admin, expect: 404)

            // What every signed route refuses, as the document lists it: no signature, a body over the
            // limit, a body that is not JSON, a field the route does not know. The admin routes answer
            // the first two as a path that does not exist.
            for (method, template) in document.signedOperations {
                let statuses = document.statuses(method, template)
                let path = Self.path(template, keyID: deviceID, tokenID: tokenID)
                let method = HTTPRequest.Method(rawValue: method) ?? .post
                let signer = signers.for(template)
                let hidden = template.hasPrefix("/admin/")
                try await contract.send(method, template, path: path, to: base, body: Self.json("{}"), expect: hidden ? 404 : 401)
                try await contract.send(method, template, path: path, to: base, body: Array(repeating: 0x20, count: 70 * 1024), signer: signer, expect: hidden ? 404 : 413)
                if statuses.contains(415) {
                    try await contract.send(method, template, path: path, to: base, body: Self.json("{}"), contentType: "text/plain", signer: signer, expect: 415)
                }
                if statuses.contains(400) && method == .get {
                    // A listing's 400: a page cursor of another shape.
                    try await contract.send(method, template, path: path + "?after=x", to: base, signer: signer, expect: 400)
                } else if statuses.contains(400) {
                    try await contract.send(method, template, path: path, to: base, body: Self.json(#"{"unexpected": 1}"#), signer: signer, expect: 400)
                }
            }
            for (body, type) in [(Self.json(#"{"unexpected": 1}"#), "application/json"), (Self.json("{}"), "text/plain")] {
                try await contract.send(.post, "/register", to: base, body: body, contentType: type, expect: type == "text/plain" ? 415 : 400)
            }
            try await contract.send(.post, "/register", to: base, body: Array(repeating: 0x20, count: 70 * 1024), expect: 413)

            // A database that stops answering: 503 everywhere, never a bare 500; liveness stays 200.
            try await store.close()
            try await contract.send(.get, "/health", to: base, expect: 200)
            try await contract.send(.get, "/ready", to: base, expect: 503)
            try await contract.send(.post, "/register", to: base, body: deviceBody, signer: proof, expect: 503)
            for (method, template) in document.signedOperations {
                let method = HTTPRequest.Method(rawValue: method) ?? .post
                let path = Self.path(template, keyID: deviceID, tokenID: tokenID)
                let body = template.hasSuffix("/retire") ? Self.json(#"{"minVersion": 1}"#) : template.hasSuffix("/user") ? Self.json(#"{"userId": 1, "email": "ada@example.com"}"#)
                    : template == "/register_user" ? user : []
                try await contract.send(method, template, path: path, to: base, body: body, signer: signers.for(template), expect: 503)
            }
        }

        // Per-user data keys: a device that belongs to no user has none.
        let userFolder = try TemporaryDirectory()
        let userStore = try await Server.sqliteStore(userFolder)
        defer { Task { try? await userStore.close() } }
        var perUser = try DataKeyTests.options(admin: adminKey, masterKey: try SecureRandom.bytes(count: 32))
        perUser.dataKeyScope = .user
        try await Server.withServer(store: userStore, options: perUser) { base in
            let signer = try await DataKeyTests.device(at: base, identity: identity)
            try await contract.send(.post, "/data-keys", to: base, signer: signer, expect: 409)
            for action in ["rotate", "retire"] {
                try await contract.send(
                    .post, "/admin/data-keys/{keyId}/\(action)", path: "/admin/data-keys/\(signer.keyID)/\(action)", to: base,
                    body: action == "retire" ? Self.json(#"{"minVersion": 1}"#) : [], signer: admin, expect: 409
                )
            }
        }

        // Rate limits: one registration and one failed signature check a minute per address.
        let limitedFolder = try TemporaryDirectory()
        let limitedStore = try await Server.sqliteStore(limitedFolder)
        defer { Task { try? await limitedStore.close() } }
        var limited = try DataKeyTests.options(admin: adminKey, masterKey: try SecureRandom.bytes(count: 32))
        limited.registrationsPerMinute = 1
        limited.signatureFailuresPerMinute = 1
        limited.clock.monotonicSeconds = { 0 }  // held still: the limit holds however slowly the test runs
        try await Server.withServer(store: limitedStore, options: limited) { base in
            try await contract.send(.post, "/register", to: base, body: Self.json(#"{"algorithm": "hmac-sha256"}"#), expect: 201)
            try await contract.send(.post, "/register", to: base, body: Self.json(#"{"algorithm": "hmac-sha256"}"#), expect: 429)
            try await contract.send(.post, "/register_user", to: base, body: Self.json("{}"), expect: 401)
            for (method, template) in document.signedOperations {
                let path = Self.path(template, keyID: "k_any", tokenID: "t_any")
                try await contract.send(HTTPRequest.Method(rawValue: method) ?? .post, template, path: path, to: base, signer: admin, expect: template.hasPrefix("/admin/") ? 404 : 429)
            }
        }

        let unseen = document.documentedAnswers.subtracting(await contract.seen)
        #expect(unseen.isEmpty, "documented but never provoked: \(unseen.sorted())")
        let undocumented = await contract.seen.subtracting(document.documentedAnswers)
        #expect(undocumented.isEmpty, "given but not documented: \(undocumented.sorted())")
    }

    /// The checker itself can fail: a body with an undocumented field, a missing required field or the
    /// wrong type, an undocumented status, and a missing required header are all reported.
    @Test func theCheckerRefusesWhatBreaksTheDocument() throws {
        let document = try OpenAPIDocument()
        let problem = #"{"type": "https://coffer.dev/problems/rate-limited", "title": "Too Many Requests", "status": 429, "reason": "rate-limited", "detail": "x"}"#
        func check(_ status: Int, _ body: String, type: String = "application/problem+json", headers: [String: String] = ["retry-after": "3"]) -> [String] {
            document.problems(method: "POST", path: "/register", status: status, contentType: type, headers: headers, body: Array(body.utf8))
        }
        #expect(check(429, problem).isEmpty)
        #expect(!check(429, problem, headers: [:]).isEmpty, "Retry-After is required")
        #expect(!check(429, problem, type: "application/json").isEmpty, "the content type is the problem document's")
        #expect(!check(418, problem).isEmpty, "418 is not documented")
        #expect(!check(429, problem.replacingOccurrences(of: #""status": 429"#, with: #""status": "429""#)).isEmpty, "status is an integer")
        #expect(!check(429, problem.replacingOccurrences(of: #", "detail": "x""#, with: "")).isEmpty, "detail is required")
        #expect(!check(429, problem.replacingOccurrences(of: #""detail": "x""#, with: #""detail": "x", "trace": "y""#)).isEmpty, "no undocumented fields")
        #expect(!check(201, #"{"keyId": "nope", "algorithm": "ed25519"}"#, type: "application/json").isEmpty, "keyId has a pattern")
        #expect(!check(201, #"{"keyId": "k_00112233445566778899aabbccddeeff", "algorithm": "md5"}"#, type: "application/json").isEmpty, "algorithm is an enum")
        #expect(check(201, #"{"keyId": "k_00112233445566778899aabbccddeeff", "algorithm": "ed25519"}"#, type: "application/json").isEmpty)
    }
}
