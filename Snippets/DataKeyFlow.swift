// Protecting local data without a password the user types: the server holds a random 256-bit key for
// the device and hands it over, sealed to the device's own encryption key, once the device proves who it
// is. Register, fetch the key, encrypt locally, "reinstall", fetch again, decrypt.
import AsyncHTTPClient
import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPClient
import CofferHTTPSignatures
import CofferServer
import Foundation
import Logging
import NIOCore

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-data-key-\(getpid())").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
var quiet = Logger(label: "snippet")
quiet.logLevel = .critical
let store = try await DatabaseLocation.sqlite(path: folder + "/server.sqlite").open(logger: quiet)
var options = RegistrationServer.Options()
options.masterKey = try ServerMasterKey(bytes: try SecureRandom.bytes(count: 32))   // --master-key-file on a real server
let (ports, listening) = AsyncStream.makeStream(of: Int.self)
let application = try RegistrationServer(store: store, options: options)
    .application(host: "127.0.0.1", port: 0, logger: quiet) { listening.yield($0) }
let serving = Task { try await application.run() }
var port = 0
for await bound in ports { port = bound; break }
let server = "http://127.0.0.1:\(port)"
try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
// snippet.show
// On first launch the app makes two keys it keeps in its keychain: one to sign requests, one to receive
// its data key. It registers both public halves; the registration is signed by the signing key itself,
// so nobody who merely copied the public key can register it first.
let signingKey = try SigningKey.generate(.p256)
let encryptionKey = RecipientPrivateKey.generateX25519()
let device = try DeviceClient(server: server, key: signingKey)
_ = try await device.register(encryptionKey: encryptionKey.publicKey)

// The data key arrives sealed to the device (HPKE) and is opened here; it encrypts local files.
let dataKey = try await DataKeyClient(device: device, identity: encryptionKey).fetch()
try CofferEncryption.encryptFile(atPath: folder + "/notes.txt", toPath: folder + "/notes.coffer", to: .key(dataKey.key))

// After a reinstall (same signing and encryption keys restored), the same key comes back.
let again = try await DataKeyClient(device: device, identity: encryptionKey).fetch(version: dataKey.version)
try CofferEncryption.decryptFile(atPath: folder + "/notes.coffer", toPath: folder + "/notes.out", with: .key(again.key))
print(String(decoding: try Data(contentsOf: URL(fileURLWithPath: folder + "/notes.out")), as: UTF8.self), terminator: "")
// snippet.hide
serving.cancel()
_ = await serving.result
try await store.close()
// snippet.show
