import CofferTestSupport
import CofferTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `coffer` selects exactly the token a `pkcs11:` URI or `--token` names (issue 42, item 5): with two
/// SoftHSM2 tokens labelled 'release', the serial picks one, the label alone is refused before any PIN
/// is sent (OpenSC's pkcs11-tool reads each token's flags: a wrong PIN would show as "user PIN count
/// low"), the URIs coffer prints carry the serial, and a PIN file others can read is warned about.
@Suite(
    "coffer selects exactly the token a URI names",
    .enabled(if: softHSMModule != nil && CommandRunner.isAvailable("softhsm2-util") && CommandRunner.isAvailable("pkcs11-tool"), "needs SoftHSM2 and pkcs11-tool")
)
struct TokenSelectionCommandTests {
    /// Two tokens labelled 'release' in a folder of their own: `first` enumerates first. Their PINs are
    /// in pin-first.txt and pin-second.txt.
    struct Twins {
        let folder: TemporaryDirectory
        let environment: [String: String]
        let first: Token
        let second: Token

        struct Token {
            let slot: UInt
            let serial: String
            let pin: String
            let pinFile: String
        }

        /// pkcs11-tool on the token in `slot`.
        func pkcs11Tool(_ arguments: [String]) async throws -> CommandResult {
            try await CommandRunner.run("pkcs11-tool", ["--module", softHSMModule ?? ""] + arguments, environment: environment, currentDirectory: folder.path)
        }

        /// The serials of the tokens on which a wrong PIN was tried since their last login, as
        /// pkcs11-tool reads their flags (SoftHSM2 keeps them on disk).
        func tokensAWrongPINReached() async throws -> [String] {
            let listed = try await pkcs11Tool(["--list-token-slots"])
            #expect(listed.status == 0, "\(listed.standardError)")
            return listed.output.components(separatedBy: "\nSlot ").filter { $0.contains("user PIN count low") }.compactMap { block in
                block.split(separator: "\n").first { $0.contains("serial num") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
            }
        }

        /// A P-256 key labelled `label` made on `token` by pkcs11-tool.
        func makeKey(on token: Token, label: String) async throws {
            let made = try await pkcs11Tool(["--slot", String(token.slot), "--login", "--pin", token.pin, "--keypairgen", "--key-type", "EC:prime256v1", "--label", label, "--usage-sign"])
            #expect(made.status == 0, "\(made.standardError)")
        }

        static func make() async throws -> Twins {
            let folder = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: folder.path("tokens"), withIntermediateDirectories: true)
            try folder.write("directories.tokendir = \(folder.path("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n", to: "softhsm2.conf")
            var environment = ProcessInfo.processInfo.environment
            environment["SOFTHSM2_CONF"] = folder.path("softhsm2.conf")
            environment["COFFER_PKCS11_MODULE"] = softHSMModule
            var pinsBySlot: [UInt: String] = [:]
            for pin in ["111111", "222222"] {
                let made = try await CommandRunner.run("softhsm2-util", ["--init-token", "--free", "--label", "release", "--so-pin", "87654321", "--pin", pin], environment: environment)
                try #require(made.status == 0, "\(made.standardError)")
                // "The token has been initialized and is reassigned to slot 436079189"
                let slot = try #require(made.output.split(separator: " ").last.flatMap { UInt($0.trimmingCharacters(in: .whitespacesAndNewlines)) }, "\(made.output)")
                pinsBySlot[slot] = pin
            }
            let listed = try await coffer(["key", "list", "--json"], environment: environment, in: folder)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput)) as? [String: Any], "\(listed.output)\(listed.standardError)")
            let tokens = try #require(report["tokens"] as? [[String: Any]]).compactMap { token -> Token? in
                guard let slot = (token["slot"] as? NSNumber)?.uintValue, let serial = token["serial"] as? String, let pin = pinsBySlot[slot] else { return nil }
                return Token(slot: slot, serial: serial, pin: pin, pinFile: pin == "111111" ? "pin-a.txt" : "pin-b.txt")
            }
            try #require(tokens.count == 2, "\(listed.output)")
            for token in tokens { try folder.write(token.pin + "\n", to: token.pinFile) }
            return Twins(folder: folder, environment: environment, first: tokens[0], second: tokens[1])
        }
    }

    /// Issue 42, item 5, as a user meets it: the label alone would have sent the second token's PIN to
    /// the first (exit 1, CKR_PIN_INCORRECT, counting against the first token's retries). Now nothing
    /// is sent: exit 2, both tokens named with their serials and slots, and `serial=` to tell them apart.
    @Test func aURIThatMatchesTwoTokensIsRefusedBeforeAnyPINIsSent() async throws {
        let twins = try await Twins.make()
        try await twins.makeKey(on: twins.first, label: "signing")
        try await twins.makeKey(on: twins.second, label: "signing")
        try twins.folder.write("x\n", to: "x.txt")
        let signed = try await coffer(["sign", "-k", "pkcs11:token=release;object=signing", "--password-file", twins.second.pinFile, "x.txt"], environment: twins.environment, in: twins.folder)
        #expect(signed.status == 2, "\(signed.standardError)")
        for token in [twins.first, twins.second] {
            #expect(signed.standardError.contains(token.serial) && signed.standardError.contains("slot \(token.slot)"), "\(signed.standardError)")
        }
        #expect(signed.standardError.contains("serial="), "\(signed.standardError)")
        #expect(try await twins.tokensAWrongPINReached() == [])

        // --token with the label alone is refused the same way, for every command that takes it.
        let listed = try await coffer(["key", "list", "--token", "release", "--password-file", twins.second.pinFile], environment: twins.environment, in: twins.folder)
        #expect(listed.status == 2 && listed.standardError.contains(twins.first.serial), "\(listed.standardError)")
        let generated = try await coffer(["key", "generate", "--token", "release", "-t", "p256", "--label", "other", "--password-file", twins.second.pinFile], environment: twins.environment, in: twins.folder)
        #expect(generated.status == 2 && generated.standardError.contains(twins.first.serial), "\(generated.standardError)")
        #expect(try await twins.tokensAWrongPINReached() == [])

        // The control: a wrong PIN that does reach a token shows on it.
        let exact = "pkcs11:token=release;serial=\(twins.first.serial);object=signing"
        let wrong = try await coffer(["sign", "-k", exact, "--password-file", twins.second.pinFile, "x.txt"], environment: twins.environment, in: twins.folder)
        #expect(wrong.status == 1 && wrong.standardError.contains("CKR_PIN_INCORRECT"), "\(wrong.standardError)")
        #expect(try await twins.tokensAWrongPINReached() == [twins.first.serial])
    }

    /// `--token` takes a token's URI wherever it takes a label; the key's URI that `key generate`
    /// prints carries the token's serial (and manufacturer and model), selects that key alone, and its
    /// signatures verify with that key's public half, not the other token's.
    @Test func aTokenURISelectsTheTokenAndThePrintedURISelectsTheKey() async throws {
        let twins = try await Twins.make()
        var uris: [String: String] = [:]
        for (token, name) in [(twins.second, "second"), (twins.first, "first")] {
            let generated = try await coffer(
                ["key", "generate", "--token", "pkcs11:token=release;serial=\(token.serial)", "-t", "p256", "--label", "signing", "--password-file", token.pinFile, "--public", "\(name).pub"],
                environment: twins.environment, in: twins.folder
            )
            #expect(generated.status == 0, "\(generated.standardError)")
            let uri = try #require(generated.lines.first { $0.contains("uri:") }?.components(separatedBy: "uri:").last?.trimmingCharacters(in: .whitespaces))
            #expect(uri.hasPrefix("pkcs11:token=release;manufacturer=SoftHSM%20project;model=SoftHSM%20v2;serial=\(token.serial);object=signing;id=%"), "\(uri)")
            #expect(uri.hasSuffix(";type=private"))
            uris[name] = uri
            // pkcs11-tool finds the key on that token's slot.
            let objects = try await twins.pkcs11Tool(["--slot", String(token.slot), "--list-objects", "--type", "pubkey"])
            #expect(objects.output.contains("label:      signing"), "\(objects.output)")
        }
        let (firstURI, secondURI) = (try #require(uris["first"]), try #require(uris["second"]))
        try twins.folder.write("release 1.2\n", to: "app.tar")
        let signed = try await coffer(["sign", "-k", secondURI, "--password-file", twins.second.pinFile, "app.tar"], environment: twins.environment, in: twins.folder)
        #expect(signed.status == 0, "\(signed.standardError)")
        let bySecond = try await coffer(["verify", "-p", "second.pub", "app.tar.sig"], environment: twins.environment, in: twins.folder)
        #expect(bySecond.status == 0, "\(bySecond.standardError)")
        let byFirst = try await coffer(["verify", "-p", "first.pub", "app.tar.sig"], environment: twins.environment, in: twins.folder)
        #expect(byFirst.status == 1, "\(byFirst.output)\(byFirst.standardError)")

        // key list --token with a URI lists that token's key, under the same URI.
        let listed = try await coffer(
            ["key", "list", "--token", "pkcs11:serial=\(twins.second.serial)", "--password-file", twins.second.pinFile, "--json"],
            environment: twins.environment, in: twins.folder
        )
        #expect(listed.status == 0 && listed.output.contains(secondURI) && !listed.output.contains(firstURI), "\(listed.output)\(listed.standardError)")
        // The token's URI that key list prints is what --token takes.
        let tokens = try await coffer(["key", "list", "--json"], environment: twins.environment, in: twins.folder)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(tokens.standardOutput)) as? [String: Any])
        let tokenURI = try #require((report["tokens"] as? [[String: Any]])?.first { $0["serial"] as? String == twins.second.serial }?["uri"] as? String)
        #expect(tokenURI == "pkcs11:token=release;manufacturer=SoftHSM%20project;model=SoftHSM%20v2;serial=\(twins.second.serial)")
        let byTokenURI = try await coffer(["key", "list", "--token", tokenURI, "--password-file", twins.second.pinFile], environment: twins.environment, in: twins.folder)
        #expect(byTokenURI.status == 0 && byTokenURI.output.contains(secondURI), "\(byTokenURI.output)\(byTokenURI.standardError)")
        #expect(try await twins.tokensAWrongPINReached() == [])

        // --token names a token: a key's attributes there are refused, not ignored.
        let keyURI = try await coffer(["key", "list", "--token", "pkcs11:serial=\(twins.second.serial);object=signing", "--password-file", twins.second.pinFile], environment: twins.environment, in: twins.folder)
        #expect(keyURI.status == 2 && keyURI.standardError.contains("object="), "\(keyURI.standardError)")
    }

    /// Issue 42, item 6: a PIN file (`pin-source=file:`) that other users can read was read silently.
    @Test func aPINFileOthersCanReadIsWarnedAbout() async throws {
        let twins = try await Twins.make()
        try await twins.makeKey(on: twins.first, label: "signing")
        try twins.folder.write("x\n", to: "x.txt")
        let pinFile = twins.folder.path(twins.first.pinFile)
        let uri = "pkcs11:serial=\(twins.first.serial);object=signing?pin-source=file:\(pinFile)"
        #expect(chmod(pinFile, 0o644) == 0)
        let open = try await coffer(["sign", "-k", uri, "x.txt", "-o", "open.sig"], environment: twins.environment, in: twins.folder)
        #expect(open.status == 0, "\(open.standardError)")
        #expect(open.standardError.contains("coffer: warning:") && open.standardError.contains(pinFile) && open.standardError.contains("chmod 600"), "\(open.standardError)")
        #expect(!open.standardError.contains(twins.first.pin))
        #expect(chmod(pinFile, 0o600) == 0)
        let closed = try await coffer(["sign", "-k", uri, "x.txt", "-o", "closed.sig"], environment: twins.environment, in: twins.folder)
        #expect(closed.status == 0 && !closed.standardError.contains("warning"), "\(closed.standardError)")
    }
}
