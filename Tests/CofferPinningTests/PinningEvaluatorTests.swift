import CofferPinning
import CofferTestSupport
import CofferTesting
import Foundation
import NIOConcurrencyHelpers
import Testing
import X509

/// The scene of the issue: a real chain (root → intermediate → leaf for localhost) and an attacker's
/// chain for the same name from a second root that the client also trusts.
struct PinningScene: Sendable {
    let pki: TestPKI
    let leaf: TestPKI.Issued
    let attackerPKI: TestPKI
    let attackerLeaf: TestPKI.Issued

    init() throws {
        pki = try TestPKI(name: "Real")
        leaf = try pki.issueServerCertificate(for: ["localhost", "127.0.0.1"])
        attackerPKI = try TestPKI(name: "Attacker")
        attackerLeaf = try attackerPKI.issueServerCertificate(for: ["localhost", "127.0.0.1"])
    }

    var servedChain: [[UInt8]] { [leaf.der, pki.intermediate.der] }
    var attackerChain: [[UInt8]] { [attackerLeaf.der, attackerPKI.intermediate.der] }
    var bothRoots: PinningPolicy.Trust { .only([pki.root.certificate, attackerPKI.root.certificate]) }

    func pin(_ issued: TestPKI.Issued) throws -> Pin { try ChainCertificate(der: issued.der).publicKeyPin }
    var backupPin: Pin { get throws { try Pin(kind: .publicKey, sha256: Array(repeating: 7, count: 32)) } }

    func evaluator(_ rules: [HostPins], reports: NIOLockedValueBox<[PinningReport]>? = nil) throws -> PinningEvaluator {
        PinningEvaluator(policy: try PinningPolicy(hosts: rules, trust: bothRoots)) { report in
            reports?.withLockedValue { $0.append(report) }
        }
    }
}

@Suite("Pin evaluation on validated chains")
struct PinningEvaluatorTests {
    let scene: PinningScene
    init() throws { scene = try PinningScene() }

    @Test func acceptsTheRightPinAndRejectsTheAttackerWhoseChainValidates() async throws {
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin])])
        let good = await evaluator.evaluate(servedChain: scene.servedChain, hostname: "localhost")
        #expect(good.verdict == .matched(try scene.pin(scene.leaf)))
        #expect(good.validatedChain.map(\.der) == [scene.leaf.der, scene.pki.intermediate.der, scene.pki.root.der])
        let bad = await evaluator.evaluate(servedChain: scene.attackerChain, hostname: "localhost")
        #expect(bad.verdict == .mismatch)
        #expect(!bad.isAccepted)
        // The attacker's chain itself is valid: without a rule it is accepted.
        let unpinned = try scene.evaluator([])
        #expect(await unpinned.evaluate(servedChain: scene.attackerChain, hostname: "localhost").verdict == .notPinned)
    }

    @Test func acceptsTheBackupPin() async throws {
        let rotated = try scene.pki.issueServerCertificate(for: ["localhost"])
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.pin(rotated)])])
        let report = await evaluator.evaluate(servedChain: [rotated.der, scene.pki.intermediate.der], hostname: "localhost")
        #expect(report.verdict == .matched(try scene.pin(rotated)))
    }

    @Test func matchesOnlyInTheConfiguredPositions() async throws {
        let intermediatePin = try scene.pin(scene.pki.intermediate)
        let rootPin = try scene.pin(scene.pki.root)
        func verdict(_ pins: [Pin], _ positions: HostPins.Positions) async throws -> PinningVerdict {
            let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: pins + [scene.backupPin], positions: positions)])
            return await evaluator.evaluate(servedChain: scene.servedChain, hostname: "localhost").verdict
        }
        #expect(try await verdict([intermediatePin], .intermediates) == .matched(intermediatePin))
        #expect(try await verdict([intermediatePin], .leaf) == .mismatch)
        #expect(try await verdict([intermediatePin], .root) == .mismatch)
        #expect(try await verdict([rootPin], .root) == .matched(rootPin))
        #expect(try await verdict([rootPin], [.leaf, .intermediates]) == .mismatch)
        #expect(try await verdict([rootPin], .any) == .matched(rootPin))
        #expect(try await verdict([try scene.pin(scene.leaf)], .intermediates) == .mismatch)
        // A certificate pin matches the exact certificate only.
        let certificatePin = try ChainCertificate(der: scene.leaf.der).certificatePin
        #expect(try await verdict([certificatePin], .leaf) == .matched(certificatePin))
    }

    @Test func certificatesOutsideTheValidatedPathNeverMatch() async throws {
        // The attacker appends the real intermediate (public knowledge) to its own chain.
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.pki.intermediate), scene.backupPin])])
        let report = await evaluator.evaluate(servedChain: scene.attackerChain + [scene.pki.intermediate.der], hostname: "localhost")
        #expect(report.verdict == .mismatch)
        #expect(report.servedChain.count == 3 && report.validatedChain.count == 3)
        #expect(!report.validatedChain.contains { $0.der == scene.pki.intermediate.der })
    }

    @Test func expiredPolicyBehavesAsConfigured() async throws {
        let yesterday = Date(timeIntervalSinceNow: -86_400)
        let fallback = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin], expires: yesterday)])
        #expect(await fallback.evaluate(servedChain: scene.attackerChain, hostname: "localhost").verdict == .expiredPolicy(matched: false))
        #expect(await fallback.evaluate(servedChain: scene.servedChain, hostname: "localhost").verdict == .expiredPolicy(matched: true))
        let enforced = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin], expires: yesterday, afterExpiry: .enforce)])
        #expect(await enforced.evaluate(servedChain: scene.attackerChain, hostname: "localhost").verdict == .mismatch)
        let future = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin], expires: Date(timeIntervalSinceNow: 86_400))])
        #expect(await future.evaluate(servedChain: scene.attackerChain, hostname: "localhost").verdict == .mismatch)
    }

    @Test func reportOnlyReportsAndProceeds() async throws {
        let reports = NIOLockedValueBox<[PinningReport]>([])
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(scene.leaf), scene.backupPin], enforcement: .reportOnly)], reports: reports)
        let report = await evaluator.evaluate(servedChain: scene.attackerChain, hostname: "localhost")
        #expect(report.verdict == .reportOnlyMismatch && report.isAccepted)
        let seen = reports.withLockedValue { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.host == "localhost")
        #expect(seen.first?.rule?.pins.contains(try scene.pin(scene.leaf)) == true)
        #expect(seen.first?.servedChain.map(\.publicKeyPin) == [try scene.pin(scene.attackerLeaf), try scene.pin(scene.attackerPKI.intermediate)])
    }

    @Test func hostnameMismatchIsRejectedEvenWhenThePinMatches() async throws {
        let other = try scene.pki.issueServerCertificate(for: ["other.example"])
        let evaluator = try scene.evaluator([HostPins(host: "localhost", pins: [scene.pin(other), scene.backupPin])])
        let report = await evaluator.evaluate(servedChain: [other.der, scene.pki.intermediate.der], hostname: "localhost")
        guard case .chainNotTrusted = report.verdict else {
            Issue.record("expected a rejected chain, got \(report.verdict)")
            return
        }
        #expect(!report.isAccepted && report.validatedChain.isEmpty)
    }

    @Test func untrustedExpiredAndEmptyChainsAreRejectedBeforePins() async throws {
        let pins = [try scene.pin(scene.leaf), try scene.backupPin]
        let onlyReal = PinningEvaluator(policy: try PinningPolicy(hosts: [HostPins(host: "localhost", pins: pins)], trust: .only([scene.pki.root.certificate])))
        let attacker = await onlyReal.evaluate(servedChain: scene.attackerChain, hostname: "localhost")
        #expect(!attacker.isAccepted)
        let expired = try scene.pki.issueServerCertificate(for: ["localhost"], key: scene.leaf.privateKey, validity: -60)
        let report = await onlyReal.evaluate(servedChain: [expired.der, scene.pki.intermediate.der], hostname: "localhost")
        guard case .chainNotTrusted = report.verdict else {
            Issue.record("an expired certificate was accepted: \(report.verdict)")
            return
        }
        #expect(await !onlyReal.evaluate(servedChain: [] as [[UInt8]], hostname: "localhost").isAccepted)
        #expect(await !onlyReal.evaluate(servedChain: [[0x30, 0x00]], hostname: "localhost").isAccepted)
        // The leaf alone (no intermediate served) does not build a path.
        #expect(await !onlyReal.evaluate(servedChain: [scene.leaf.der], hostname: "localhost").isAccepted)
    }

    @Test func subdomainRulesApplyBelowTheirHost() async throws {
        let api = try scene.pki.issueServerCertificate(for: ["api.example.test"])
        let evaluator = try scene.evaluator([HostPins(host: "example.test", includesSubdomains: true, pins: [scene.pin(scene.leaf), scene.backupPin])])
        #expect(await evaluator.evaluate(servedChain: [api.der, scene.pki.intermediate.der], hostname: "api.example.test").verdict == .mismatch)
        let exactOnly = try scene.evaluator([HostPins(host: "example.test", pins: [scene.pin(scene.leaf), scene.backupPin])])
        #expect(await exactOnly.evaluate(servedChain: [api.der, scene.pki.intermediate.der], hostname: "api.example.test").verdict == .notPinned)
    }
}
