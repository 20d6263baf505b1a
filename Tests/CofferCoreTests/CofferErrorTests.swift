import CofferCore
import Testing

/// Coffer's error design, as swift-asn1's: equality by code only, a static member per code to compare
/// with, and the throw site in the debug description but never in the description a user reads.
@Suite("Errors compare by code")
struct CofferErrorTests {
    struct Lower: Error {}

    @Test func errorsOfOneCodeAreEqualWhateverTheirReasonsAndPlaces() {
        let first = CofferCoreError(.invalidLength, "expected an even number of hex digits, found 3")
        let second = CofferCoreError(.invalidLength, "another reason", underlying: Lower())
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != CofferCoreError(.invalidCharacter, "expected an even number of hex digits, found 3"))
        #expect(Set([first, second, CofferCoreError.invalidCharacter]).count == 2)
    }

    @Test func eachCodeHasAnErrorToCompareWith() throws {
        #expect(CofferCoreError.fileNotFound.code == .fileNotFound)
        #expect(CofferCoreError.matching(.isDirectory) == .isDirectory)
        #expect(CofferCoreError.fileNotFound.reason.contains("file-not-found"))
        #expect(throws: CofferCoreError.invalidLength) { try Hex.decode("abc") }
        do {
            _ = try Hex.decode("zz")
            Issue.record("not hex")
        } catch CofferCoreError.invalidCharacter {
            // `catch` matches by code.
        } catch {
            Issue.record("expected invalidCharacter, found \(error)")
        }
    }

    @Test func theThrowSiteIsInTheDebugDescriptionOnly() throws {
        let error = try #require(throws: CofferCoreError.invalidLength) { try Hex.decode("abc") }
        #expect(error.location.hasPrefix("CofferCore/Hex.swift:"), "\(error.location)")
        #expect(error.debugDescription.contains(error.location), "\(error.debugDescription)")
        #expect(error.debugDescription.hasPrefix("CofferCoreError(invalid-length): \(error.reason)"), "\(error.debugDescription)")
        #expect(!error.description.contains(".swift:"), "\(error.description)")
        #expect(String(describing: error) == error.reason)

        let here = CofferCoreError(.ioFailure, "expected to write, found a full disk", underlying: Lower())
        #expect(here.location == "CofferCoreTests/CofferErrorTests.swift:\(#line - 1)")
        #expect(here.debugDescription.hasSuffix("; underlying: \(String(reflecting: Lower()))"), "\(here.debugDescription)")
    }

    @Test func codesKeepTheirStableStrings() {
        #expect(CofferCoreError.Code.fileNotFound.rawValue == "file-not-found")
        #expect(CofferCoreError.Code.fileExists.description == "file-exists")
    }
}
