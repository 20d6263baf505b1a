import CofferCore
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Issue 42: `coffer keychain import -i` takes items only from an exporter the importer names.
@Suite("coffer keychain import: who wrote the export")
struct KeychainImportTrustCommandTests {
    /// A keychain (cheap scrypt) and the importer's X25519 key pair, in a fresh folder.
    struct Setup {
        let folder: TemporaryDirectory
        var keychain: [String] { ["--keychain", folder.path("keychain.db"), "--password-file", folder.path("pw")] }

        init() async throws {
            folder = try TemporaryDirectory()
            try folder.writeSecret("correct horse\n", to: "pw")
            let created = try await coffer(["keychain", "create", "--scrypt-log-n", "10"] + keychain)
            #expect(created.status == 0, "\(created.standardError)")
            let generated = try await coffer("key", "generate", "-t", "x25519", "-o", "me.key", "--public", "me.pub", in: folder)
            #expect(generated.status == 0, "\(generated.standardError)")
        }

        func importing(_ arguments: [String]) async throws -> CommandResult {
            try await coffer(["keychain", "import"] + arguments + keychain, in: folder)
        }

        func items() async throws -> String {
            try await coffer(["keychain", "list"] + keychain, in: folder).output
        }
    }

    /// The spec's export document (docs/KEYCHAIN.md): one generic password, service `s`, account `a`,
    /// secret `hi`. Anyone can write it.
    static let document = try! Hex.decode(
        "434f464645524b43" + "01" + "00000001" + "010200" + "41cdcd6500000000" + "41cdcd6500800000"
            + "00" + "010000000173" + "010000000161" + String(repeating: "00", count: 13) + "00000002" + "6869"
    )

    /// The reproduction: with only the importer's public key, `coffer encrypt -r` makes a file that
    /// `keychain import -i` took. It is refused by default, and nothing is imported.
    @Test func aDocumentPlantedWithThePublicKeyIsRefused() async throws {
        let setup = try await Setup()
        try setup.folder.write(Self.document, to: "document")
        let planted = try await coffer("encrypt", "-r", "me.pub", "document", "-o", "planted.coffer", in: setup.folder)
        #expect(planted.status == 0, "\(planted.standardError)")

        let result = try await setup.importing(["-i", "me.key", "planted.coffer"])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("not signed"), "\(result.standardError)")
        #expect(result.standardError.contains("--insecure-accept-unsigned") && result.standardError.contains("-p"), "the hint says how: \(result.standardError)")
        #expect(try await setup.items().isEmpty, "nothing imported")
    }

    /// A 1.0.0-format export (unsigned, to a recipient) imports only with the flag that says the risk.
    @Test func anUnsignedExportImportsOnlyWithTheInsecureFlag() async throws {
        let setup = try await Setup()
        try setup.folder.write(Self.document, to: "document")
        #expect(try await coffer("encrypt", "-r", "me.pub", "document", "-o", "old.coffer", in: setup.folder).status == 0)
        #expect(try await coffer("key", "generate", "-t", "ed25519", "-o", "alice.key", "--public", "alice.pub", in: setup.folder).status == 0)
        let named = try await setup.importing(["-i", "me.key", "-p", "alice.pub", "old.coffer"])
        #expect(named.status == 1 && named.standardError.contains("not signed"), "\(named.standardError)")
        #expect(try await setup.items().isEmpty)
        let accepted = try await setup.importing(["-i", "me.key", "--insecure-accept-unsigned", "old.coffer"])
        #expect(accepted.status == 0 && accepted.standardError.contains("imported 1 item"), "\(accepted.standardError)")
        #expect(try await setup.items().contains("s"))
        let both = try await setup.importing(["-i", "me.key", "-p", "alice.pub", "--insecure-accept-unsigned", "old.coffer"])
        #expect(both.status == 2, "\(both.standardError)")
    }

    /// The exporter signs with --signing-key; the importer names the exporter's public key with -p.
    @Test func aSignedExportImportsFromTheNamedKeyOnly() async throws {
        let setup = try await Setup()
        let alice = try await Setup()
        for name in ["alice", "mallory"] {
            #expect(try await coffer("key", "generate", "-t", "ed25519", "-o", "\(name).key", "--public", "\(name).pub", in: setup.folder).status == 0)
        }
        #expect(try await coffer(["keychain", "add", "--service", "bank.example", "--account", "ada", "--stdin"] + alice.keychain, input: Array("real".utf8)).status == 0)
        let me = setup.folder.path("me.pub")
        let unsigned = try await coffer(["keychain", "export", "-r", me, "-o", setup.folder.path("unsigned.coffer")] + alice.keychain)
        #expect(unsigned.status == 2 && unsigned.standardError.contains("--signing-key"), "\(unsigned.standardError)")
        for (name, signer) in [("from-alice.coffer", "alice.key"), ("from-mallory.coffer", "mallory.key")] {
            let export = try await coffer(["keychain", "export", "-r", me, "--signing-key", setup.folder.path(signer), "-o", setup.folder.path(name)] + alice.keychain)
            #expect(export.status == 0 && export.standardError.contains("signed by key"), "\(export.standardError)")
        }

        let unnamed = try await setup.importing(["-i", "me.key", "from-alice.coffer"])
        #expect(unnamed.status == 1 && unnamed.standardError.contains("no key was named") && unnamed.standardError.contains("-p FILE"), "\(unnamed.standardError)")
        let impostor = try await setup.importing(["-i", "me.key", "-p", "alice.pub", "from-mallory.coffer"])
        #expect(impostor.status == 1 && impostor.standardError.contains("not by key"), "\(impostor.standardError)")
        #expect(try await setup.items().isEmpty, "nothing imported")

        let imported = try await setup.importing(["-i", "me.key", "-p", "alice.pub", "from-alice.coffer"])
        #expect(imported.status == 0 && imported.standardError.contains("imported 1 item"), "\(imported.standardError)")
        #expect(try await coffer(["keychain", "get", "--service", "bank.example", "--account", "ada"] + setup.keychain).output == "real")
    }
}
