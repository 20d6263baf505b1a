import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// `coffer serve`'s configuration errors (issue 20): a database URL is never printed with its password,
/// parsed or not, and the benchmark's unsigned route is gone from the product.
@Suite("coffer serve configuration")
struct ServeCommandTests {
    @Test(arguments: [
        "postgres://coffer:hunter2@[::1/db",          // does not parse: where the password ends cannot be known
        "postgres://coffer:hunter2@/db",              // parses, but names no host
        "mysql://coffer:hunter2@db.example/coffer",   // another scheme
        "postgres://coffer:hunter2@127.0.0.1/db?sslmode=sometimes",
    ])
    func aDatabaseURLIsNeverPrintedWithItsPassword(url: String) async throws {
        let folder = try TemporaryDirectory()
        for (arguments, environment) in [(["serve", "--port", "0", "--database", url], [String: String]()), (["serve", "--port", "0"], ["COFFER_DATABASE": url])] {
            var variables = ProcessInfo.processInfo.environment
            variables.merge(environment) { $1 }
            let result = try await coffer(arguments, environment: variables, in: folder)
            #expect(result.status == 2, "\(result.standardError)")
            #expect(!result.standardError.contains("hunter2"), "\(result.standardError)")
            #expect(!result.output.contains("hunter2"))
        }
    }

    @Test func theUnsignedTwinIsNotAnOption() async throws {
        let result = try await coffer("serve", "--unsigned-twin", "--port", "0")
        #expect(result.status == 2)
        #expect(result.standardError.contains("Unknown option '--unsigned-twin'"), "\(result.standardError)")
    }
}
