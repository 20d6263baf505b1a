// The unsigned twin of `POST /register_user` that serve-load-server and route-cost add beside coffer
// serve's routes: the same work without a signature (the JSON body parsed, the user inserted, a JSON
// answer), so that what a signature costs is the difference between the two. It lives in the
// benchmarks only: a route that records users without any signature has no place in `coffer serve`.
public import CofferServer
import Foundation
public import Hummingbird
public import HTTPTypes

/// The field in which a twin request names its key (the signed route reads it from the signature).
public let unsignedKeyIDField = HTTPField.Name("Coffer-Unsigned-Key-Id")!

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
public func addUnsignedTwin<Context: RequestContext>(to router: Router<Context>, store: any RegistrationStore) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    router.post(RouterPath(stringLiteral: String(unsignedTwinPath.dropFirst()))) { request, _ -> Response in
        guard let keyID = request.headers[unsignedKeyIDField] else { return Response(status: .badRequest) }
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
