import CofferCore
import CofferCrypto
import CofferFormats
import CofferHTTPSignatures
import CofferTesting
import HTTPTypes
import Testing

/// One error design across modules: a code, a reason without secrets, the throw site and the lower
/// layer's error kept whole.
@Suite("Error design")
struct ErrorDesignTests {
    struct StoreDown: Error, CustomStringConvertible {
        var description: String { "connection refused: postgres://app:hunter2@db.internal/keys" }
    }

    struct DownKeys: HTTPSignatureKeyProvider {
        func verificationKey(forKeyID keyID: String) async throws -> HTTPVerificationKey? { throw StoreDown() }
    }

    static func shape<E: CofferError>(_ error: E, module: String) {
        #expect(!error.code.description.isEmpty)
        #expect(!error.reason.isEmpty && error.description.contains(error.reason))
        #expect(error.location.hasPrefix(module + "/"), "\(error.location)")
    }

    /// A key store's failure reaches the caller as `unavailable` with the store's error underneath, and
    /// its text (here, a database password) is not copied into the reason that servers log.
    @Test func aStoresErrorIsKeptUnderneathNotCopiedIntoTheReason() async throws {
        let client = try TestRequestSigner()
        let request = try client.signed(HTTPRequest(method: .get, scheme: "https", authority: "api.test", path: "/"))
        do {
            _ = try await HTTPMessageVerifier(keys: DownKeys()).verify(request, body: nil)
            Issue.record("a failing key store must not pass")
        } catch {
            #expect(error.code == .unavailable)
            #expect(!error.reason.contains("hunter2") && !error.description.contains("postgres"))
            #expect(error.underlying is StoreDown)
            Self.shape(error, module: "CofferHTTPSignatures")
        }
    }

    @Test func everyModulesErrorHasTheShape() throws {
        do { _ = try Hex.decode("0g") } catch { Self.shape(error, module: "CofferCore") }
        do { _ = try MACKey(bytes: []) } catch { Self.shape(error, module: "CofferCrypto") }
        do { _ = try SignatureFile(parsing: "not a signature") } catch { Self.shape(error, module: "CofferFormats") }
        // Equality is by code: the reason, where an error was raised and what lay under it are for people.
        #expect(CofferCoreError(.invalidLength, "x") == CofferCoreError(.invalidLength, "y", underlying: StoreDown()))
        #expect(CofferFormatsError(.malformedChecksumLine, "x", line: 1) == CofferFormatsError.malformedChecksumLine)
        #expect(CofferCryptoError.invalidKey != CofferCryptoError.invalidArgument)
        #expect(HTTPSignatureError.unavailable.code.rawValue == "unavailable")
    }
}
