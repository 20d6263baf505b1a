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
import Logging
import Prometheus
import Testing

/// Operations (issue 22): the metrics count what happened, and `/ready` says whether the database
/// answers with the schema this Coffer needs.
@Suite("Operations")
struct OperationsTests {
    typealias Server = RegistrationServerTests

    /// The value of one sample line in Prometheus' text format, 0 when absent.
    static func sample(_ text: String, _ prefix: String) -> Double {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test func metricsCountWhatHappened() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        let registry = PrometheusCollectorRegistry()
        var options = RegistrationServer.Options()
        options.metricsFactory = PrometheusMetricsFactory(registry: registry)
        options.registrationsPerMinute = 2
        // Held still: the third registration meets the limit however long the first two took (on a
        // loaded machine they once took over a minute, and the bucket refilled).
        options.clock.monotonicSeconds = { 0 }
        options.masterKey = try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))
        try await Server.withServer(store: store, options: options) { base in
            let identity = RecipientPrivateKey.generateX25519()
            let signer = try await DataKeyTests.device(at: base, identity: identity)
            _ = try await DataKeyClient(server: base, signer: signer, identity: identity).fetch()
            let request = try Server.signedUserRequest(base, signer: signer, email: "ada@example.com")
            #expect(try await Server.send(request).status == 201)
            #expect(try await Server.send(request).problem?.reason == "replayed")
            #expect(try await Server.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#).status == 201)
            #expect(try await Server.post(base, "/register", json: #"{"algorithm": "hmac-sha256"}"#).status == 429)
            let ready = try await Server.send(HTTPClientRequest(url: base + "/ready"))
            #expect(ready.status == 200 && ready.json["status"] as? String == "ready")
            #expect(try await Server.send(HTTPClientRequest(url: base + "/metrics")).status == 404, "metrics never on the public port")
        }
        let text = registry.emitToString()
        #expect(Self.sample(text, #"coffer_requests_total{route="/register",status="201"}"#) == 2)
        #expect(Self.sample(text, #"coffer_requests_total{route="/register",status="429"}"#) == 1)
        #expect(Self.sample(text, #"coffer_requests_total{route="/register_user",status="401"}"#) == 1)
        #expect(Self.sample(text, #"coffer_signature_refusals_total{reason="replayed"}"#) == 1)
        #expect(Self.sample(text, #"coffer_rate_limited_total{limit="registration"}"#) == 1)
        #expect(Self.sample(text, #"coffer_data_keys_issued_total{kind="fetched"}"#) == 1)
        // Four signed requests: the registration's proof and the data key's record their use on their
        // own; the user and its replay are each one write that holds the replay record with the user.
        #expect(Self.sample(text, #"coffer_store_seconds_count{operation="record_first_use"}"#) == 2, "the registration and the data-key request")
        #expect(Self.sample(text, #"coffer_store_seconds_count{operation="insert_user"}"#) == 2, "the user, and its replay")
    }

    @Test func readyNeedsTheDatabaseAndTheSchema() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Server.sqliteStore(folder)
        #expect(try await store.schemaVersion() >= 3)
        try await Server.withServer(store: store) { base in
            #expect(try await Server.send(HTTPClientRequest(url: base + "/ready")).status == 200)
            try await store.close()
            let closed = try await Server.send(HTTPClientRequest(url: base + "/ready"))
            #expect(closed.status == 503 && closed.json["status"] as? String == "unavailable")
        }
    }
}
