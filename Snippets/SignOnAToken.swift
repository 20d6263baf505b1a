// A key that never leaves the token: generated there as sensitive and not extractable, used to sign
// there, found again later by its RFC 7512 URI, and signing as a SigningKey. Runs against SoftHSM2 when
// it is installed.
// snippet.hide
import CofferTesting
import Foundation
// snippet.show
import CofferCrypto
import CofferFormats
import CofferPKCS11

// snippet.hide
guard FileManager.default.fileExists(atPath: "/usr/lib/softhsm/libsofthsm2.so") else {
    print("SoftHSM2 (Debian softhsm2) is not installed: nothing to sign with")
    exit(0)
}
// A token of its own: SoftHSM2 reads SOFTHSM2_CONF when the module loads.
let tokens = try TemporaryDirectory(prefix: "coffer-snippet-softhsm")
try FileManager.default.createDirectory(atPath: tokens.path("tokens"), withIntermediateDirectories: true)
try tokens.write("directories.tokendir = \(tokens.path("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n", to: "softhsm2.conf")
setenv("SOFTHSM2_CONF", tokens.path("softhsm2.conf"), 1)
let softHSM = try PKCS11Module.load("/usr/lib/softhsm/libsofthsm2.so")
guard let empty = try softHSM.slots(withTokenOnly: false).first(where: { $0.token?.isInitialized == false }) else { exit(1) }
_ = try softHSM.initializeToken(slot: empty, label: "release", securityOfficerPIN: Array("so-123456".utf8), userPIN: Array("123456".utf8))
// snippet.show
let pin = Array("123456".utf8)               // asked of the user, or read from a file; never from argv
let module = try PKCS11Module.load("/usr/lib/softhsm/libsofthsm2.so")
let session = try module.openSession(tokenLabel: "release", pin: pin)
let key = try session.generateKeyPair(.p256, label: "release-2026")
let signature = try key.sign(Array("hello".utf8))      // DER ECDSA, as OpenSSL writes it
let uri = key.uri.description   // pkcs11:token=release;manufacturer=…;model=…;serial=…;object=release-2026;id=…;type=private

// Later, by that URI: exactly one token and one key must match, or nothing is sent to any token.
let signing = try module.privateKey(try PKCS11URI(uri), pin: pin)

// A SigningKey like any other: every API that takes one signs on the token (exporting it is refused).
let tokenKey = try SigningKey(signing)
let file = try SignatureFile.sign(digest: DigestAlgorithm.sha512.hash(Array("hello".utf8)), with: tokenKey, comment: "release")
// snippet.hide
guard signing.verifyingKey.isValidSignature(signature, for: Array("hello".utf8)) else { exit(1) }
guard case .valid = file.verify(digest: DigestAlgorithm.sha512.hash(Array("hello".utf8)), with: tokenKey.verifyingKey) else { exit(1) }
print(uri)
