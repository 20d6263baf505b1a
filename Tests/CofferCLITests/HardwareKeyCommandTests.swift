import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// SoftHSM2's module, where Debian and others put it.
let softHSMModule: String? = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so", "/usr/local/lib/softhsm/libsofthsm2.so"]
    .first { FileManager.default.fileExists(atPath: $0) }

/// `coffer` with keys on a PKCS #11 token (issue 24): generated on a SoftHSM2 token the test initialises
/// with softhsm2-util, listed with their URIs, used with `-k pkcs11:…` for signature files, raw
/// signatures OpenSSL checks and RFC 9421 requests; wrong PINs, missing modules, tokens and keys are
/// each a clear error.
@Suite("coffer with keys on a token", .enabled(if: softHSMModule != nil && CommandRunner.isAvailable("softhsm2-util"), "needs SoftHSM2"))
struct HardwareKeyCommandTests {
    static var module: String? { softHSMModule }

    /// A folder with its own SoftHSM2 configuration and one token, 'release', whose PIN is in pin.txt.
    static func token() async throws -> (TemporaryDirectory, [String: String]) {
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.path("tokens"), withIntermediateDirectories: true)
        try folder.write("directories.tokendir = \(folder.path("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n", to: "softhsm2.conf")
        var environment = ProcessInfo.processInfo.environment
        environment["SOFTHSM2_CONF"] = folder.path("softhsm2.conf")
        let made = try await CommandRunner.run("softhsm2-util", ["--init-token", "--free", "--label", "release", "--so-pin", "87654321", "--pin", "123456"], environment: environment)
        try #require(made.status == 0, "\(made.standardError)")
        try folder.write("123456\n", to: "pin.txt")
        try folder.write("000000\n", to: "wrong-pin.txt")
        environment["COFFER_PKCS11_MODULE"] = module
        return (folder, environment)
    }

    @Test(arguments: ["p256", "ed25519"])
    func aTokenKeySignsEverythingAFileKeySigns(type: String) async throws {
        let (folder, environment) = try await Self.token()
        let generated = try await coffer(
            ["key", "generate", "--token", "release", "-t", type, "--label", "signing", "--password-file", "pin.txt", "--public", "signing.pub"],
            environment: environment, in: folder
        )
        #expect(generated.status == 0, "\(generated.standardError)")
        #expect(generated.output.contains("on token 'release'") && generated.output.contains("sensitive and not extractable"))
        let uri = try #require(generated.lines.first { $0.contains("uri:") }?.components(separatedBy: "uri:").last?.trimmingCharacters(in: .whitespaces))
        // The token by label, manufacturer, model and serial; the key by label and id.
        #expect(uri.hasPrefix("pkcs11:token=release;manufacturer=SoftHSM%20project;model=SoftHSM%20v2;serial=") && uri.contains(";object=signing;id=%") && uri.hasSuffix(";type=private"), "\(uri)")

        let listed = try await coffer(["key", "list", "--token", "release", "--password-file", "pin.txt", "--json"], environment: environment, in: folder)
        #expect(listed.status == 0 && listed.output.contains(uri), "\(listed.output)\(listed.standardError)")

        _ = try folder.write("release 1.2\n", to: "app.tar")
        let signed = try await coffer(["sign", "-k", uri, "--password-file", "pin.txt", "app.tar"], environment: environment, in: folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        let verified = try await coffer(["verify", "-p", "signing.pub", "app.tar.sig"], environment: environment, in: folder)
        #expect(verified.status == 0, "\(verified.standardError)")

        let raw = try await coffer(["sign", "--raw", "-k", uri, "--password-file", "pin.txt", "app.tar", "-o", "app.raw"], environment: environment, in: folder)
        #expect(raw.status == 0, "\(raw.standardError)")
        if CommandRunner.isAvailable("openssl") {
            // ECDSA signs the file's SHA-512 as `openssl dgst -sha512` does; Ed25519 signs the file itself,
            // as `openssl pkeyutl -rawin` does.
            let openssl = type == "ed25519"
                ? try await tool("openssl", ["pkeyutl", "-verify", "-pubin", "-inkey", "signing.pub", "-rawin", "-in", "app.tar", "-sigfile", "app.raw"], in: folder)
                : try await tool("openssl", ["dgst", "-sha512", "-verify", "signing.pub", "-signature", "app.raw", "app.tar"], in: folder)
            #expect(openssl.status == 0 && openssl.output.contains("Verified"), "\(openssl.output)\(openssl.standardError)")
        }

        let request = try await coffer(
            ["http", "sign", "-k", uri, "--password-file", "pin.txt", "--keyid", "device", "--method", "POST", "--url", "https://api.example/orders"],
            environment: environment, in: folder
        )
        #expect(request.status == 0, "\(request.standardError)")
        let raw9421 = "POST /orders HTTP/1.1\r\nHost: api.example\r\n" + request.lines.map { $0 + "\r\n" }.joined() + "\r\n"
        let checked = try await coffer(["http", "verify", "-p", "signing.pub", "--ignore-time"], input: Array(raw9421.utf8), environment: environment, in: folder)
        #expect(checked.status == 0 && checked.output.contains("by key 'device'"), "\(checked.output)\(checked.standardError)")

        // The keychain keeps a reference to the token key under a tag (no PIN needed: the public key is public).
        #expect(try await coffer(["keychain", "create", "--keychain", "kc.db", "--password-file", "pin.txt"], environment: environment, in: folder).status == 0)
        let referenced = try await coffer(
            ["keychain", "add", "--keychain", "kc.db", "--password-file", "pin.txt", "--tag", "com.example.signing", "-k", "pkcs11:token=release;object=signing"],
            environment: environment, in: folder
        )
        #expect(referenced.status == 0 && referenced.standardError.contains("reference to \(type == "p256" ? "P-256" : "Ed25519") key"), "\(referenced.standardError)")
        // The reference names the key exactly: the token by its serial, the key by its id.
        #expect(referenced.standardError.contains("on token 'release' (serial "), "\(referenced.standardError)")
        let items = try await coffer(["keychain", "list", "--keychain", "kc.db", "--password-file", "pin.txt"], environment: environment, in: folder)
        #expect(items.output.contains("com.example.signing"), "\(items.output)")

        let speed = try await coffer(["speed", "-k", uri, "--password-file", "pin.txt", "--seconds", "0.2", "--json"], environment: environment, in: folder)
        #expect(speed.status == 0 && speed.output.contains(#""algorithm":"token-\#(type)""#), "\(speed.output)\(speed.standardError)")
    }

    /// The module given (`--pkcs11-module` or `$COFFER_PKCS11_MODULE`) is the only one loaded: a URI's
    /// `module-path` naming another library is refused before anything is loaded, so a URI that
    /// arrives as data (a stored reference, a pasted line) cannot run a library of its choosing.
    @Test(.enabled(if: CommandRunner.isAvailable("cc"), "needs a C compiler"))
    func aURIsModulePathNeverReplacesTheModuleGiven() async throws {
        let (folder, environment) = try await Self.token()
        try folder.write("#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { FILE *f = fopen(\"RAN\", \"w\"); if (f) fclose(f); }\n", to: "other.c")
        let compiled = try await CommandRunner.run("cc", ["-shared", "-fPIC", "-o", folder.path("other.so"), folder.path("other.c")])
        try #require(compiled.status == 0, "\(compiled.standardError)")
        #expect(try await coffer(["key", "generate", "--token", "release", "-t", "p256", "--label", "k", "--password-file", "pin.txt"], environment: environment, in: folder).status == 0)
        _ = try folder.write("x\n", to: "x.txt")
        let uri = "pkcs11:token=release;object=k?module-path=\(folder.path("other.so"))"
        let refused = try await coffer(["sign", "-k", uri, "--password-file", "pin.txt", "x.txt"], environment: environment, in: folder)
        #expect(refused.status != 0 && refused.standardError.contains("module-path"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("RAN")), "the URI's library was loaded")
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.txt.sig")))
    }

    /// `keychain export --signing-key pkcs11:…` signs the export on the token (its PIN from the URI's
    /// pin-source), and the import checks it with the key's public half.
    @Test func aKeychainExportIsSignedOnTheToken() async throws {
        let (folder, environment) = try await Self.token()
        #expect(try await coffer(["key", "generate", "--token", "release", "-t", "p256", "--label", "exporter", "--password-file", "pin.txt", "--public", "exporter.pub"], environment: environment, in: folder).status == 0)
        #expect(try await coffer(["key", "generate", "-t", "x25519", "-o", "bob.key"], environment: environment, in: folder).status == 0)
        #expect(try await coffer(["keychain", "create", "--keychain", "kc.db", "--password-file", "pin.txt"], environment: environment, in: folder).status == 0)
        #expect(try await coffer(["keychain", "add", "--keychain", "kc.db", "--password-file", "pin.txt", "--service", "s", "--account", "a", "--stdin"], input: Array("hunter2".utf8), environment: environment, in: folder).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.path("pin.txt"))
        let uri = "pkcs11:token=release;object=exporter?pin-source=file:\(folder.path("pin.txt"))"
        let exported = try await coffer(
            ["keychain", "export", "--keychain", "kc.db", "--password-file", "pin.txt", "-r", "bob.key.pub", "--signing-key", uri, "-o", "for-bob.coffer"],
            environment: environment, in: folder
        )
        #expect(exported.status == 0, "\(exported.output)\(exported.standardError)")
        #expect(FileManager.default.fileExists(atPath: folder.path("for-bob.coffer")))
    }

    @Test func tokenFailuresAreClearErrors() async throws {
        let (folder, environment) = try await Self.token()
        #expect(try await coffer(["key", "generate", "--token", "release", "-t", "p256", "--label", "k", "--password-file", "pin.txt"], environment: environment, in: folder).status == 0)
        _ = try folder.write("x\n", to: "x.txt")
        let uri = "pkcs11:token=release;object=k"
        let wrongPIN = try await coffer(["sign", "-k", uri, "--password-file", "wrong-pin.txt", "x.txt"], environment: environment, in: folder)
        #expect(wrongPIN.status == 1 && wrongPIN.standardError.contains("C_Login failed on token 'release': CKR_PIN_INCORRECT"), "\(wrongPIN.standardError)")
        #expect(!wrongPIN.standardError.contains("000000"))

        var noModule = environment
        noModule["COFFER_PKCS11_MODULE"] = nil
        let missingModule = try await coffer(["sign", "-k", uri, "--password-file", "pin.txt", "x.txt"], environment: noModule, in: folder)
        #expect(missingModule.status == 2 && missingModule.standardError.contains("--pkcs11-module"), "\(missingModule.standardError)")

        let missingToken = try await coffer(["sign", "-k", "pkcs11:token=other;object=k", "--password-file", "pin.txt", "x.txt"], environment: environment, in: folder)
        #expect(missingToken.status == 2 && missingToken.standardError.contains("matches token=other: 'release' (serial ") && missingToken.standardError.contains("has token 'release', not 'other'"), "\(missingToken.standardError)")

        let missingKey = try await coffer(["sign", "-k", "pkcs11:token=release;object=gone", "--password-file", "pin.txt", "x.txt"], environment: environment, in: folder)
        #expect(missingKey.status == 2 && missingKey.standardError.contains("no private key matches object=gone on token 'release' (serial "), "\(missingKey.standardError)")

        let leaky = try await coffer(["sign", "-k", "pkcs11:token=release;object=k?pin-value=123456", "x.txt"], environment: environment, in: folder)
        #expect(leaky.status == 2 && leaky.standardError.contains("pin-value") && !leaky.standardError.contains("123456"), "\(leaky.standardError)")

        let twice = try await coffer(["key", "generate", "--token", "release", "-t", "p256", "--label", "k", "--password-file", "pin.txt"], environment: environment, in: folder)
        #expect(twice.status == 2 && twice.standardError.contains("already holds a key labelled 'k'"), "\(twice.standardError)")
        let software = try await coffer(["key", "generate", "--token", "release", "-t", "p521", "--label", "e", "--password-file", "pin.txt"], environment: environment, in: folder)
        #expect(software.status == 2 && software.standardError.contains("p256, p384, ed25519, rsa2048"), "\(software.standardError)")
    }

    /// The registration flow with token keys on both sides, against `coffer serve`: an admin whose key
    /// is on a token creates a registration token, a device registers the public half of its token key,
    /// and its RFC 9421-signed request is accepted.
    @Test func theRegistrationFlowTakesTokenKeys() async throws {
        let (folder, environment) = try await Self.token()
        for (label, file) in [("admin", "admin.pub"), ("device", "device.pub")] {
            let made = try await coffer(["key", "generate", "--token", "release", "-t", "p256", "--label", label, "--password-file", "pin.txt", "--public", file], environment: environment, in: folder)
            #expect(made.status == 0, "\(made.standardError)")
        }
        let server = try CommandRunner.start(
            try CommandRunner.cofferExecutable(),
            ["serve", "--port", "0", "--database", "sqlite:" + folder.path("server.sqlite"), "--admin-key", "admin.pub", "--key-cache-ms", "0"],
            pipeInput: false, environment: environment, currentDirectory: folder.path
        )
        defer { server.stop() }
        let log = try #require(await server.waitForError(containing: "listening on"))
        let port = try #require(log.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: ":").last.map(String.init))
        let base = "http://127.0.0.1:\(port)"

        let created = try await coffer(
            ["server", "tokens", "create", "--uses", "1", "--server", base, "-k", "pkcs11:token=release;object=admin", "--password-file", "pin.txt"],
            environment: environment, in: folder
        )
        #expect(created.status == 0, "\(created.standardError)")
        let token = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        // The device's key on the token proves possession of itself: the registration is signed on the token.
        _ = try folder.write(token + "\n", to: "token.txt")
        let registered = try await coffer(
            ["server", "register", "--server", base, "-k", "pkcs11:token=release;object=device", "--password-file", "pin.txt", "--token-file", "token.txt", "--json"],
            environment: environment, in: folder
        )
        #expect(registered.status == 0, "\(registered.output)\(registered.standardError)")
        let keyID = try #require((try JSONSerialization.jsonObject(with: Data(registered.standardOutput)) as? [String: Any])?["keyId"] as? String)
        let signedUp = try await coffer(
            ["request", "-k", "pkcs11:token=release;object=device", "--password-file", "pin.txt", "--keyid", keyID, "-X", "POST", base + "/register_user",
             "-d", #"{"email": "ada@example.com", "name": "Ada"}"#],
            environment: environment, in: folder
        )
        #expect(signedUp.status == 0, "\(signedUp.output)\(signedUp.standardError)")
    }
}
