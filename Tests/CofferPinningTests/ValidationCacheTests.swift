@testable import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// The evaluator's cache of validated chains: it may skip validation only for the very same bytes and
/// host, never for failures, never past its lifetime or a certificate's expiry, and never skips the pins.
@Suite("Validated-chain cache")
struct ValidationCacheTests {
    let scene: PinningScene
    init() throws { scene = try PinningScene() }

    @Test func aValidatedChainIsRememberedForItsHostAndBytesOnly() async throws {
        let evaluator = try scene.evaluator([])
        let now = Date()
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "localhost", at: now) == nil)
        #expect(await evaluator.evaluate(servedChain: scene.servedChain, hostname: "localhost").isAccepted)

        let cached = try #require(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "localhost", at: now))
        #expect(cached.verdict == .notPinned)
        #expect(cached.validatedChain.map(\.der) == [scene.leaf.der, scene.pki.intermediate.der, scene.pki.root.der])
        // Another host, another order, another certificate: not found.
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "elsewhere.test", at: now) == nil)
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "otherhost", at: now) == nil)
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain.reversed(), hostname: "localhost", at: now) == nil)
        #expect(evaluator.cachedEvaluation(servedChain: [scene.leaf.der], hostname: "localhost", at: now) == nil)
        // And the other host is still validated, and refused (the certificate does not name it).
        let elsewhere = await evaluator.evaluate(servedChain: scene.servedChain, hostname: "elsewhere.test")
        guard case .chainNotTrusted = elsewhere.verdict else {
            Issue.record("a chain cached for localhost passed for elsewhere.test: \(elsewhere.verdict)")
            return
        }
    }

    @Test func failuresAreNeverRemembered() async throws {
        let evaluator = PinningEvaluator(policy: try PinningPolicy(hosts: [], trust: .only([scene.pki.root.certificate])))
        for _ in 0..<2 {
            let report = await evaluator.evaluate(servedChain: scene.attackerChain, hostname: "localhost")
            #expect(!report.isAccepted)
        }
        #expect(evaluator.cachedEvaluation(servedChain: scene.attackerChain, hostname: "localhost", at: Date()) == nil)
    }

    @Test func pinsAreCheckedOnEveryConnectionEvenWhenValidationIsCached() async throws {
        // The attacker's chain validates (the client trusts both roots) and is cached; its pins never match.
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin])])
        #expect(await evaluator.evaluate(servedChain: scene.attackerChain, hostname: "localhost").verdict == .mismatch)
        let cached = try #require(evaluator.cachedEvaluation(servedChain: scene.attackerChain, hostname: "localhost", at: Date()))
        #expect(cached.verdict == .mismatch)
        #expect(!cached.isAccepted)
        #expect(await evaluator.evaluate(servedChain: scene.attackerChain, hostname: "localhost").verdict == .mismatch)
        // The policy's own expiry is applied at each evaluation's date, not at the cached one's.
        let expiring = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin], expires: Date() + 60)])
        #expect(await expiring.evaluate(servedChain: scene.servedChain, hostname: "localhost").verdict == .matched(try scene.pin(scene.leaf)))
        let later = try #require(expiring.cachedEvaluation(servedChain: scene.servedChain, hostname: "localhost", at: Date() + 120))
        #expect(later.verdict == .expiredPolicy(matched: true))
    }

    @Test func entriesExpireWithTheCacheLifetimeAndTheEarliestCertificate() async throws {
        let policy = try PinningPolicy(hosts: [], trust: scene.bothRoots)
        let evaluator = PinningEvaluator(policy: policy, validationCacheLifetime: .seconds(30))
        #expect(await evaluator.evaluate(servedChain: scene.servedChain, hostname: "localhost").isAccepted)
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "localhost", at: Date() + 20) != nil)
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "localhost", at: Date() + 31) == nil)

        // A leaf that expires in 10 s is remembered for 10 s at most, whatever the lifetime.
        let shortLived = try scene.pki.issueServerCertificate(for: ["localhost"], validity: 10)
        let chain = [shortLived.der, scene.pki.intermediate.der]
        let patient = PinningEvaluator(policy: policy, validationCacheLifetime: .seconds(3_600))
        #expect(await patient.evaluate(servedChain: chain, hostname: "localhost").isAccepted)
        #expect(patient.cachedEvaluation(servedChain: chain, hostname: "localhost", at: Date() + 5) != nil)
        #expect(patient.cachedEvaluation(servedChain: chain, hostname: "localhost", at: Date() + 11) == nil)
    }

    @Test func aZeroLifetimeTurnsTheCacheOff() async throws {
        let evaluator = PinningEvaluator(policy: try PinningPolicy(hosts: [], trust: scene.bothRoots), validationCacheLifetime: .zero)
        #expect(await evaluator.evaluate(servedChain: scene.servedChain, hostname: "localhost").isAccepted)
        #expect(evaluator.cachedEvaluation(servedChain: scene.servedChain, hostname: "localhost", at: Date()) == nil)
    }

    @Test func theCacheStaysBounded() async throws {
        let cache = ValidationCache(lifetime: .seconds(60))
        let served = try [ChainCertificate(der: scene.leaf.der), ChainCertificate(der: scene.pki.intermediate.der)]
        let now = Date()
        for index in 0...ValidationCache.capacity {
            cache.store(.serverChain, served: served, validated: served, hostname: "host\(index).test", at: now)
        }
        let found = (0...ValidationCache.capacity).filter { cache.entry(for: .serverChain, served: served.map(\.der), hostname: "host\($0).test", at: now) != nil }
        #expect(found.count == ValidationCache.capacity)
        #expect(found.last == ValidationCache.capacity)
    }
}
