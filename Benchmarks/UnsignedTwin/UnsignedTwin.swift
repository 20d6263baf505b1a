// The unsigned twin of `POST /register_user` that serve-load-server and route-cost add beside coffer
// serve's routes: the same work without a signature (the JSON body parsed, the user inserted, a JSON
// answer), so that what a signature costs is the difference between the two. It lives in the
// benchmarks only: a route that records users without any signature has no place in `coffer serve`.
//
// A twin request may also ask for one signature check's worth of work (`Coffer-Unsigned-Primitive:
// hmac-sha256` or `ed25519`): the primitive a signed route runs, over a fixed signature base as long as
// the load generator's, with none of the signature handling around it. Against that twin, a signed
// route's extra CPU is Coffer's own (parsing, Content-Digest, policy, replay record), measured at the
// load the primitive itself brings (a route that spends 48 µs a request in Ed25519 answers fewer
// requests a second, each wake-up and commit carrying fewer of them).
import CofferCrypto
import CofferHTTPSignatures
public import CofferServer
import Foundation
public import Hummingbird
public import HTTPTypes

/// The field in which a twin request names its key (the signed route reads it from the signature).
public let unsignedKeyIDField = HTTPField.Name("Coffer-Unsigned-Key-Id")!

/// The field in which a twin request asks for one check of a signature primitive: `hmac-sha256` or
/// `ed25519`.
public let unsignedPrimitiveField = HTTPField.Name("Coffer-Unsigned-Primitive")!

/// One valid signature of each primitive over a fixed signature base the length of the one
/// bench/wrk/register_user.lua signs, checked through the same calls the verifier makes.
private struct PrimitiveChecks: Sendable {
    let base: String
    let hmacKey: HTTPVerificationKey
    let hmacSignature: [UInt8]
    let ed25519Key: HTTPVerificationKey
    let ed25519Signature: [UInt8]

    init() throws {
        // The shape of the load generator's base (its nonce and address are longer than this fixture's).
        base = #""@method": POST"# + "\n" + #""@target-uri": http://127.0.0.1:40000/register_user"# + "\n"
            + #""content-digest": sha-256=:3sHQFOqQmQFQBqNAzFOvNwUGSw5Mb0v7VJyQQ5Nc2V0=:"# + "\n"
            + #""content-type": application/json"# + "\n"
            + #""@signature-params": ("@method" "@target-uri" "content-digest" "content-type");created=1790000000;nonce="r1ed4242-1-123456";alg="ed25519";keyid="4Vh0mJc6Pq1pQy3o8F2sXw""#
        let hmac = HTTPSigningKey.hmacSHA256(secret: try MACKey.generate())
        hmacKey = hmac.verificationKey
        hmacSignature = try hmac.signature(for: base)
        let ed25519 = try HTTPSigningKey(try SigningKey.generate(.ed25519))
        ed25519Key = ed25519.verificationKey
        ed25519Signature = try ed25519.signature(for: base)
    }

    /// Whether the named primitive's check passed; nil for a name it does not know.
    func check(_ name: String) -> Bool? {
        switch name {
        case "hmac-sha256": hmacKey.isValidSignature(hmacSignature, for: base)
        case "ed25519": ed25519Key.isValidSignature(ed25519Signature, for: base)
        default: nil
        }
    }
}

/// The twin's path.
public let unsignedTwinPath = "/unsigned/register_user"

private struct UserBody: Decodable {
    let email: String
    let name: String
}

private struct UserAnswer: Encodable {
    let id: Int64
    let email: String
    let name: String
    let keyId: String
}

/// Adds `POST /unsigned/register_user` to `router`, writing users to `store`.
public func addUnsignedTwin<Context: RequestContext>(to router: Router<Context>, store: any RegistrationStore) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let checks = try PrimitiveChecks()
    router.post(RouterPath(stringLiteral: String(unsignedTwinPath.dropFirst()))) { request, _ -> Response in
        guard let keyID = request.headers[unsignedKeyIDField] else { return Response(status: .badRequest) }
        if let primitive = request.headers[unsignedPrimitiveField] {
            guard let valid = checks.check(primitive) else { return Response(status: .badRequest) }
            guard valid else { return Response(status: .internalServerError) }
        }
        var request = request
        let buffer = try await request.collectBody(upTo: 64 * 1024)
        guard let body = try? JSONDecoder().decode(UserBody.self, from: Data(buffer.readableBytesView)) else { return Response(status: .badRequest) }
        guard let user = try await store.insertUser(email: body.email, name: body.name, keyID: keyID, createdAt: Int64(Date().timeIntervalSince1970)) else {
            return Response(status: .conflict)
        }
        let data = try encoder.encode(UserAnswer(id: user.id, email: user.email, name: user.name, keyId: user.keyID))
        return Response(status: .created, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
