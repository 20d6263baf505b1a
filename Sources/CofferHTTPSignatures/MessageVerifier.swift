import CofferCore
import CofferCrypto
import Foundation
public import HTTPTypes

/// A signature that passed every check, and what it said.
public struct HTTPVerifiedSignature: Sendable {
    /// The signature's label.
    public let label: String
    /// The key id it was made with (its key was found and checked it).
    public let keyID: String
    /// The algorithm of that key.
    public let algorithm: HTTPSignatureAlgorithm
    /// What it covers.
    public let components: [HTTPSignatureComponent]
    /// Its parameters.
    public let parameters: HTTPSignatureParameters
    /// The replay record still owed, when a middleware deferred it to the route (see
    /// ``HTTPReplayObligation``); nil when it was written before the route ran.
    package var replayObligation: HTTPReplayObligation? = nil
}

/// Checks signed requests against one ``HTTPSignaturePolicy`` (RFC 9421 §3.2): the signature must cover
/// what the policy requires, be fresh, name a known key whose algorithm it does not try to change, verify
/// over the message, match the body's `Content-Digest`, and not have been accepted before.
///
/// ```swift
/// let verifier = HTTPMessageVerifier(policy: HTTPSignaturePolicy(), keys: myKeyStore)
/// let verified = try await verifier.verify(request, body: body)   // throws HTTPSignatureError
/// print(verified.keyID)
/// ```
public struct HTTPMessageVerifier: Sendable {
    /// The policy.
    public var policy: HTTPSignaturePolicy
    /// Where keys are found by `keyid`.
    public let keys: any HTTPSignatureKeyProvider
    /// The replay cache; nil turns replay protection off.
    public let replayCache: (any HTTPSignatureReplayCache)?

    /// A verifier; by default with a replay cache in memory.
    public init(policy: HTTPSignaturePolicy = HTTPSignaturePolicy(), keys: any HTTPSignatureKeyProvider, replayCache: (any HTTPSignatureReplayCache)? = InMemoryReplayCache()) {
        self.policy = policy
        self.keys = keys
        self.replayCache = replayCache
    }

    /// Verifies a request and its body (nil for none). With several signatures, the first that satisfies
    /// the policy wins; when none does, the first one's failure is thrown.
    ///
    /// - Parameters:
    ///   - request: the request as received.
    ///   - body: its content, or nil for none.
    ///   - now: UNIX seconds (the current time by default).
    /// - Throws: ``HTTPSignatureError`` whose code says why: `.missingSignature`, `.malformedSignature`,
    ///   `.componentNotCovered`, `.tagMismatch`, `.expired`, `.createdInFuture`, `.unknownKey`,
    ///   `.algorithmMismatch`, `.badSignature`, `.digestMismatch`, `.replayed`, or `.unavailable` when the
    ///   key store or replay cache failed.
    public func verify(_ request: HTTPRequest, body: [UInt8]?, now: Int64? = nil) async throws(HTTPSignatureError) -> HTTPVerifiedSignature {
        try await verify(.request(request), body: body, now: now ?? Int64(Date().timeIntervalSince1970))
    }

    /// Verifies a request as ``verify(_:body:now:)`` does, except that the replay record is returned
    /// instead of written (nil when there is no replay cache). The caller owes it: it must write it,
    /// with ``recordFirstUse(_:label:)`` or in the same transaction as the request's effect, before that
    /// effect can be seen, and treat a record that was already there as a replay.
    package func verifyDeferringReplayRecord(_ request: HTTPRequest, body: [UInt8]?, now: Int64? = nil) async throws(HTTPSignatureError) -> (HTTPVerifiedSignature, HTTPReplayRecord?) {
        try await verify(.request(request), body: body, now: now ?? Int64(Date().timeIntervalSince1970), deferringReplay: true)
    }

    /// Writes a replay record ``verifyDeferringReplayRecord(_:body:now:)`` returned.
    /// - Throws: ``HTTPSignatureError`` `.replayed` when it was already there, `.unavailable` when the
    ///   cache did not answer.
    package func recordFirstUse(_ record: HTTPReplayRecord, label: String) async throws(HTTPSignatureError) {
        guard let replayCache else { return }
        let firstUse: Bool
        do {
            firstUse = try await replayCache.recordFirstUse(of: record.identifier, expiringAt: record.expiry, now: record.now)
        } catch {
            throw HTTPSignatureError(.unavailable, "the replay cache did not answer (its error is the underlying error, not shown here)", underlying: error)
        }
        guard firstUse else { throw Self.replayed(label: label) }
    }

    /// The refusal of a signature that was already accepted.
    package static func replayed(label: String) -> HTTPSignatureError {
        HTTPSignatureError(.replayed, "signature '\(label)' was already accepted; a request cannot be sent twice")
    }

    /// Verifies a response, `request` supplying the components marked `req`.
    public func verify(_ response: HTTPResponse, answering request: HTTPRequest?, body: [UInt8]?, now: Int64? = nil) async throws(HTTPSignatureError) -> HTTPVerifiedSignature {
        try await verify(.response(response, request: request), body: body, now: now ?? Int64(Date().timeIntervalSince1970))
    }

    func verify(_ message: HTTPSignedMessage, body: [UInt8]?, now: Int64) async throws(HTTPSignatureError) -> HTTPVerifiedSignature {
        try await verify(message, body: body, now: now, deferringReplay: false).0
    }

    func verify(_ message: HTTPSignedMessage, body: [UInt8]?, now: Int64, deferringReplay: Bool) async throws(HTTPSignatureError) -> (HTTPVerifiedSignature, HTTPReplayRecord?) {
        var candidates = try HTTPSignatureFields.signatures(in: message.headerFields)
        if let label = policy.label { candidates = candidates.filter { $0.label == label } }
        guard !candidates.isEmpty else {
            throw HTTPSignatureError(.missingSignature, policy.label.map { "the request carries no signature labelled '\($0)'" } ?? "the request carries no Signature-Input and Signature fields")
        }
        var firstFailure: HTTPSignatureError?
        for candidate in candidates {
            do {
                return try await verify(candidate, in: message, body: body, now: now, deferringReplay: deferringReplay)
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        throw firstFailure ?? HTTPSignatureError(.missingSignature, "no signature was checked")
    }

    func verify(
        _ candidate: HTTPMessageSignature, in message: HTTPSignedMessage, body: [UInt8]?, now: Int64, deferringReplay: Bool
    ) async throws(HTTPSignatureError) -> (HTTPVerifiedSignature, HTTPReplayRecord?) {
        // The parameters are read in place, not copied into a local: a copy retains each of their strings.
        try checkPolicy(candidate, body: body)
        try checkTime(candidate.parameters, now: now)
        guard let keyID = candidate.parameters.keyID else {
            throw HTTPSignatureError(.unknownKey, "signature '\(candidate.label)' names no keyid")
        }
        let key: HTTPVerificationKey
        do {
            guard let found = try await keys.verificationKey(forKeyID: keyID) else {
                throw HTTPSignatureError(.unknownKey, "no key is registered as '\(keyID)'")
            }
            key = found
        } catch let error as HTTPSignatureError {
            throw error
        } catch {
            throw HTTPSignatureError(.unavailable, "the key store did not answer (its error is the underlying error, not shown here: it may name a database and its credentials)", underlying: error)
        }
        if let algorithm = candidate.parameters.algorithm, algorithm != key.algorithm.rawValue {
            throw HTTPSignatureError(.algorithmMismatch, "signature '\(candidate.label)' says alg=\(algorithm) but key '\(keyID)' is \(key.algorithm)")
        }
        let base = try HTTPSignatureBase.bytes(
            for: message, covering: candidate.components,
            signatureParams: HTTPSignatureBase.signatureParamsBytes(candidate.components, candidate.parameters)
        )
        guard key.isValidSignature(candidate.signature, forBase: base) else {
            throw HTTPSignatureError(.badSignature, "signature '\(candidate.label)' does not verify with key '\(keyID)'")
        }
        if candidate.components.contains(.contentDigest), let field = message.headerFields.combinedLines(of: .contentDigest) {
            try ContentDigest.check(field, body: body ?? [])
        }
        let verified = HTTPVerifiedSignature(label: candidate.label, keyID: keyID, algorithm: key.algorithm, components: candidate.components, parameters: candidate.parameters)
        guard replayCache != nil else { return (verified, nil) }
        let record = try replayRecord(candidate, keyID: keyID, base: base, now: now)
        if !deferringReplay { try await recordFirstUse(record, label: candidate.label) }
        return (verified, record)
    }

    func checkPolicy(_ candidate: HTTPMessageSignature, body: [UInt8]?) throws(HTTPSignatureError) {
        let parameters = candidate.parameters
        let label = candidate.label
        if let tag = policy.tag, parameters.tag != tag {
            throw HTTPSignatureError(.tagMismatch, "signature '\(label)' is not tagged '\(tag)'")
        }
        if policy.requiresCreated && parameters.created == nil {
            throw HTTPSignatureError(.componentNotCovered, "signature '\(label)' has no created parameter")
        }
        if policy.requiresExpires && parameters.expires == nil {
            throw HTTPSignatureError(.componentNotCovered, "signature '\(label)' has no expires parameter")
        }
        if policy.requiresNonce && parameters.nonce == nil {
            throw HTTPSignatureError(.componentNotCovered, "signature '\(label)' has no nonce parameter")
        }
        for required in policy.requiredComponents where !candidate.components.contains(required) {
            throw HTTPSignatureError(.componentNotCovered, "signature '\(label)' does not cover \(required)")
        }
        if policy.requiresContentDigestWithBody, let body, !body.isEmpty, !candidate.components.contains(.contentDigest) {
            throw HTTPSignatureError(.componentNotCovered, "the request has a body but signature '\(label)' does not cover \"content-digest\"")
        }
    }

    func checkTime(_ parameters: HTTPSignatureParameters, now: Int64) throws(HTTPSignatureError) {
        if let created = parameters.created {
            if created > now &+ policy.clockSkew {
                throw HTTPSignatureError(.createdInFuture, "the signature was created \(created &- now) s in the future")
            }
            if let maximumAge = policy.maximumAge, now &- created > maximumAge &+ policy.clockSkew {
                throw HTTPSignatureError(.expired, "the signature is \(now &- created) s old; at most \(maximumAge) s are accepted")
            }
        }
        if let expires = parameters.expires {
            if let created = parameters.created, expires < created {
                throw HTTPSignatureError(.invalidParameter, "the signature expires before it was created")
            }
            if now > expires &+ policy.clockSkew {
                throw HTTPSignatureError(.expired, "the signature expired \(now &- expires) s ago")
            }
        }
    }

    /// The signature's replay record: its identity is the signature's anchor (`created`, or `expires`)
    /// followed by the digest of `keyid` and nonce when there is one, otherwise of `keyid` and the
    /// signature base (not of the signature bytes, which ECDSA lets anyone re-randomize)
    /// (docs/HTTP-SIGNATURES.md, "Replay protection"); it expires one second after the last instant at
    /// which the signature is accepted.
    /// - Throws: ``HTTPSignatureError`` `.componentNotCovered` for a signature that nothing bounds in time.
    func replayRecord(_ candidate: HTTPMessageSignature, keyID: String, base: [UInt8], now: Int64) throws(HTTPSignatureError) -> HTTPReplayRecord {
        let parameters = candidate.parameters
        // The last instant at which checkTime accepts this signature; the record must outlive it, so it
        // expires one second later (a record counts as unused from its expiry on).
        var lastAccepted: Int64?
        if let created = parameters.created, let maximumAge = policy.maximumAge { lastAccepted = created &+ maximumAge &+ policy.clockSkew }
        if let expires = parameters.expires { lastAccepted = min(lastAccepted ?? .max, expires &+ policy.clockSkew) }
        guard let lastAccepted, let anchor = parameters.created ?? parameters.expires else {
            throw HTTPSignatureError(
                .componentNotCovered,
                "signature '\(candidate.label)' has no end: neither created (with the policy's maximum age) nor expires bounds it, so no replay record could outlive it"
            )
        }
        var digester = Digester(.sha256)
        digester.update(keyID)
        digester.update([0])
        if let nonce = parameters.nonce {
            digester.update("nonce:")
            digester.update(nonce)
        } else {
            digester.update("base:")
            digester.update(base)
        }
        return HTTPReplayRecord(
            identifier: HTTPReplayRecord.identifier(anchor: anchor, digest: digester.finalize().bytes),
            expiry: lastAccepted == .max ? .max : lastAccepted + 1, now: now
        )
    }
}

extension HTTPMessageVerifier {
    /// For a request this verifier refused as `bad-signature`: the other of `http` and `https` when the
    /// request's signature would have verified under it, nil otherwise.
    ///
    /// `@target-uri` and `@scheme` carry a scheme that an HTTP/1.1 request does not: the server states
    /// the one its clients sign. A client that signed `http` where the server expects `https` (or a
    /// server behind a TLS-terminating proxy told `http` while its clients sign `https`) fails on that
    /// alone, and `bad-signature` does not show it. This check finds it, to be said in the refusal.
    ///
    /// It never accepts anything: call it only after ``verify(_:body:now:)`` refused the request, and
    /// refuse the request whatever it returns. It reads no replay record and writes none (so it reveals
    /// nothing about what was accepted before), and it costs one more key lookup and signature check —
    /// which is why it is not run on success, nor for a signature that covers neither `@target-uri` nor
    /// `@scheme`. What it reveals is only that a signature the caller sent is valid for the same request
    /// under the other scheme; making such a signature takes the key.
    ///
    /// - Parameters:
    ///   - request: the request as verified, with the scheme the server expects.
    ///   - body: its content, or nil for none.
    ///   - now: UNIX seconds (the current time by default).
    /// - Returns: `http` or `https`, or nil when the request's scheme is neither, no signature covers the
    ///   scheme, or the signature does not verify under the other scheme either.
    public func otherSchemeThatVerifies(_ request: HTTPRequest, body: [UInt8]?, now: Int64? = nil) async -> String? {
        let other: String
        switch request.scheme?.lowercased() {
        case "https": other = "http"
        case "http": other = "https"
        default: return nil
        }
        guard let input = request.headerFields[.signatureInput], input.contains("\"@target-uri\"") || input.contains("\"@scheme\"") else {
            return nil
        }
        var twin = request
        twin.scheme = other
        let diagnosis = HTTPMessageVerifier(policy: policy, keys: keys, replayCache: nil)
        do {
            _ = try await diagnosis.verify(twin, body: body, now: now)
            return other
        } catch {
            return nil
        }
    }
}
