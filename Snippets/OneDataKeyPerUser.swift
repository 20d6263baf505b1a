// One data key for all of a user's devices: a server started with the user scope hands each device the
// key of the user your backend linked it to, sealed to that device's own encryption key.
// snippet.hide
import CofferCore
import CofferCrypto
import CofferFormats
import CofferServer
import Foundation
import Logging
// snippet.show
import CofferHTTPClient

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-user-key-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
var quiet = Logger(label: "snippet")
quiet.logLevel = .critical
let store = try await DatabaseLocation.sqlite(path: folder + "/server.sqlite").open(logger: quiet)
let adminKey = try SigningKey.generate(.ed25519)
var options = RegistrationServer.Options()
options.masterKey = try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))
options.dataKeyScope = .user                       // coffer serve --data-key-scope user
options.adminKeys = [adminKey.verifyingKey]        // coffer serve --admin-key
options.registration = .open                       // coffer serve --registration open
options.keyRecordMaximumAge = .zero                // a link counts at once here; by default within 500 ms (--key-cache-ms)
let (ports, listening) = AsyncStream.makeStream(of: Int.self)
let application = try RegistrationServer(store: store, options: options)
    .application(host: "127.0.0.1", port: 0, logger: quiet) { listening.yield($0) }
let serving = Task { try await application.run() }
var port = 0
for await bound in ports { port = bound; break }
let server = "http://127.0.0.1:\(port)"

// The user's first device: registered, signed up, linked by the backend, and holding the user's key.
let oldPhone = try DeviceClient(server: server, key: try SigningKey.generate(.p256))
let oldPhoneIdentity = RecipientPrivateKey.generateX25519()
_ = try await oldPhone.register(encryptionKey: oldPhoneIdentity.publicKey)
let userID = try await oldPhone.signUp(email: "ada@example.com", name: "Ada").id
_ = try await AdminClient(server: server, key: adminKey).link(key: oldPhone.keyID, toUser: userID, email: "ada@example.com")
let usersKey = try await DataKeyClient(device: oldPhone, identity: oldPhoneIdentity).fetch()
let sealed = try CofferEncryption.encrypt(Array("notes".utf8), to: .key(usersKey.key))

// A new phone of the same user registers; until it is linked, it gets no key.
let newDevice = try DeviceClient(server: server, key: try SigningKey.generate(.p256))
let newDeviceIdentity = RecipientPrivateKey.generateX25519()
_ = try await newDevice.register(encryptionKey: newDeviceIdentity.publicKey)
do {
    _ = try await DataKeyClient(device: newDevice, identity: newDeviceIdentity).fetch()
    fatalError("a device that belongs to no user got a key")
} catch {
    guard error.problemReason == "no-user" else { throw error }
}
// snippet.show
// Your backend, once the user has signed in on the new device (through single sign-on, say), links the
// device's key to the user, with an admin key the server was started with. It names the address its
// sign-in verified too: the server links only if that user holds it.
let admin = try AdminClient(server: server, key: adminKey)
_ = try await admin.link(key: newDevice.keyID, toUser: userID, email: "ada@example.com")

// The new device now receives the user's key, sealed to its own encryption key.
let dataKey = try await DataKeyClient(device: newDevice, identity: newDeviceIdentity).fetch()
// snippet.hide
print(String(decoding: try CofferEncryption.decrypt(sealed, with: .key(dataKey.key)), as: UTF8.self))
serving.cancel()
_ = await serving.result
try await store.close()
