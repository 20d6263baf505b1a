// What a signature costs `POST /register_user` in process: coffer serve's router (RegistrationServer,
// its SQLite store in a temporary folder) answers the HMAC-signed route and its unsigned twin
// (UnsignedTwin) through Hummingbird's router test client, with no socket, no event loop and no load
// generator sharing the cores. The difference between the two routes is Coffer's signed path as a
// lone client meets it: parsing the signature fields, Content-Digest, the policy, the key look-up, the
// MAC, the replay record in the user's transaction, the middleware.
//
//   cd Benchmarks && swift run -c release -Xswiftc -cross-module-optimization route-cost [rounds] [per round] [signed|twin]
//
// Requests are signed (or written) before each timed batch; each line is the median over rounds of
// the process's CPU time per answered request (the writer thread's included), and of that the time in
// the kernel (system calls, page faults: getrusage), rounds of the two routes interleaved. Every answer
// must be 201, or the run stops.
import CofferCore
import CofferCrypto
import CofferHTTPSignatures
import CofferServer
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Logging
import NIOCore
import UnsignedTwin

/// The process's CPU time so far, in the kernel (system calls, page faults) and in total, in µs.
struct CPUTime {
    let system: Double
    let total: Double

    static func now() -> CPUTime {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func microseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1_000_000 + Double(time.tv_usec) }
        let system = microseconds(usage.ru_stime)
        return CPUTime(system: system, total: system + microseconds(usage.ru_utime))
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// One request ready to send: its header fields and body.
struct Prepared: Sendable {
    let fields: HTTPFields
    let body: ByteBuffer
}

func userBody(_ email: String) -> [UInt8] {
    Array(#"{"email": "\#(email)", "name": "Ada Lovelace"}"#.utf8)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func run() async throws {
    let arguments = CommandLine.arguments.dropFirst()
    let rounds = arguments.first.flatMap(Int.init) ?? 9
    let perRound = arguments.dropFirst().first.flatMap(Int.init) ?? 2_000
    // `signed` or `twin` sends only that route's timed rounds (to profile one route at a time).
    let only = arguments.dropFirst(2).first
    guard only == nil || only == "signed" || only == "twin" else { throw Failure(description: "the third argument is signed or twin") }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-route-cost-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: folder) }

    var logger = Logger(label: "route-cost", factory: ServerLogHandler.standardError)
    logger.logLevel = .warning
    let store = try await DatabaseLocation("sqlite:" + folder.appendingPathComponent("route-cost.sqlite").path).open(logger: logger)
    var options = RegistrationServer.Options()
    options.registrationsPerMinute = nil
    options.signatureFailuresPerMinute = nil
    options.signUpsPerKey = nil  // one key signs up every user of the load
    // The router test client's requests say `localhost`; the signer signs the same authority.
    options.authority = "localhost"
    let secret = try MACKey.generate()
    let keyID = "h_route_cost"
    _ = try await store.registerKey(RegisteredKey(
        keyID: keyID, algorithm: .hmacSHA256, publicKey: nil, secret: secret.withUnsafeKeyBytes { Base64.encode(Array($0)) },
        createdAt: Int64(Date().timeIntervalSince1970)
    ), spending: nil)
    let router = try RegistrationServer(store: store, options: options).router()
    try addUnsignedTwin(to: router, store: store)
    let app = Application(router: router, logger: logger)

    let signer = {
        var signer = HTTPMessageSigner(key: .hmacSHA256(secret: secret), keyID: keyID)
        signer.components = [.method, .targetURI, .field("content-digest"), .field("content-type")]
        return signer
    }()

    @Sendable func signed(_ round: Int) throws -> [Prepared] {
        try (0..<perRound).map { index in
            let body = userBody("signed-\(round)-\(index)@example.com")
            var request = HTTPRequest(method: .post, scheme: "http", authority: "localhost", path: "/register_user")
            request.headerFields[.contentType] = "application/json"
            _ = try signer.sign(&request, body: body)
            return Prepared(fields: request.headerFields, body: ByteBuffer(bytes: body))
        }
    }
    @Sendable func unsigned(_ round: Int) -> [Prepared] {
        (0..<perRound).map { index in
            Prepared(
                fields: [.contentType: "application/json", unsignedKeyIDField: keyID],
                body: ByteBuffer(bytes: userBody("unsigned-\(round)-\(index)@example.com"))
            )
        }
    }

    print("POST /register_user through coffer serve's router in process, CPU per answered request")
    print("(\(rounds) rounds of \(perRound) requests a route, interleaved; median of the rounds)")
    try await app.test(.router) { client in
        /// CPU µs per request of sending `batch` to `path`: in total, and of that in the kernel.
        func send(_ batch: [Prepared], to path: String) async throws -> (total: Double, system: Double) {
            let start = CPUTime.now()
            for request in batch {
                let status = try await client.execute(uri: path, method: .post, headers: request.fields, body: request.body) { $0.status }
                guard status == .created else { throw Failure(description: "\(path) answered \(status.code), not 201") }
            }
            let end = CPUTime.now()
            let count = Double(batch.count)
            return ((end.total - start.total) / count, (end.system - start.system) / count)
        }
        // One round of each first, not counted: statements prepared, caches and tables warm.
        _ = try await send(unsigned(-1), to: unsignedTwinPath)
        _ = try await send(try signed(-1), to: "/register_user")
        var twin: [(total: Double, system: Double)] = [], hmac: [(total: Double, system: Double)] = []
        for round in 0..<rounds {
            let (plain, signedBatch) = (unsigned(round), try signed(round))
            if let only {
                if only == "signed" { hmac.append(try await send(signedBatch, to: "/register_user")) } else { twin.append(try await send(plain, to: unsignedTwinPath)) }
                continue
            }
            if round.isMultiple(of: 2) {
                twin.append(try await send(plain, to: unsignedTwinPath))
                hmac.append(try await send(signedBatch, to: "/register_user"))
            } else {
                hmac.append(try await send(signedBatch, to: "/register_user"))
                twin.append(try await send(plain, to: unsignedTwinPath))
            }
        }
        if only != nil {
            let times = hmac + twin
            print(String(format: "\(only == "signed" ? "hmac-sha256 signed" : "unsigned twin     ")      %7.1f µs  (in the kernel %.1f)",
                         median(times.map(\.total)), median(times.map(\.system))))
            return
        }
        let differences = zip(hmac, twin).map { $0.total - $1.total }
        let kernel = zip(hmac, twin).map { $0.system - $1.system }
        print(String(format: "unsigned twin           %7.1f µs  (in the kernel %.1f)", median(twin.map(\.total)), median(twin.map(\.system))))
        print(String(format: "hmac-sha256 signed      %7.1f µs  (in the kernel %.1f)", median(hmac.map(\.total)), median(hmac.map(\.system))))
        print(String(format: "signed − twin           %7.1f µs  (in the kernel %.1f; by round: %@)", median(differences), median(kernel),
                     differences.map { String(format: "%.1f", $0) }.joined(separator: " ")))
    }
    try await store.close()
}

try await run()
