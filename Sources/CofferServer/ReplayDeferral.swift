import CofferHTTPSignatures
import Foundation
import Hummingbird

/// Moves the replay record of a signed request from the signature check into the route's own write.
///
/// A signed `/register_user` writes twice: the signature's replay identity, then the user. Through
/// ``DeferringReplayCache`` the verifier leaves the identity in this request's slot instead of writing
/// it, and the route stores it with the user in one step
/// (``RegistrationStore/insertUser(email:name:keyID:createdAt:recording:)``), where a replay is refused
/// and nothing is stored. Whatever the route did not take (it answered before storing anything, or it
/// threw) ``ReplayDeferralMiddleware`` records on the way out, so every accepted signature is recorded
/// exactly as without deferral.
enum ReplayDeferral {
    /// The slot of the request being handled; nil outside ``ReplayDeferralMiddleware``.
    @TaskLocal static var slot: Slot?

    /// Holds at most one record, for one request.
    final class Slot: @unchecked Sendable {
        private let lock = NSLock()
        private var record: ReplayRecord?

        /// Keeps `new`; false when the slot already holds one (a second signature on the same request).
        func put(_ new: ReplayRecord) -> Bool {
            lock.withLock {
                guard record == nil else { return false }
                record = new
                return true
            }
        }

        /// Takes the record out, leaving the slot empty.
        func take() -> ReplayRecord? {
            lock.withLock {
                defer { record = nil }
                return record
            }
        }
    }
}

/// The replay cache the verifier of a deferring route uses: inside a ``ReplayDeferralMiddleware``, the
/// first record of a request goes to its slot and counts as a first use for now (the route's write
/// decides); anything else goes straight to the store.
struct DeferringReplayCache: HTTPSignatureReplayCache {
    let store: any RegistrationStore

    func recordFirstUse(of identifier: String, expiringAt expiry: Int64, now: Int64) async throws -> Bool {
        let record = ReplayRecord(identifier: identifier, expiry: expiry, now: now)
        if let slot = ReplayDeferral.slot, slot.put(record) { return true }
        return try await store.recordFirstUse(of: identifier, expiringAt: expiry, now: now)
    }
}

/// Opens a slot for the request (``ReplayDeferral``) and records what the route left in it.
struct ReplayDeferralMiddleware<Context: RequestContext>: RouterMiddleware {
    let store: any RegistrationStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let slot = ReplayDeferral.Slot()
        do {
            let response = try await ReplayDeferral.$slot.withValue(slot) { try await next(request, context) }
            try await record(slot.take())
            return response
        } catch {
            try? await record(slot.take())
            throw error
        }
    }

    private func record(_ pending: ReplayRecord?) async throws {
        guard let pending else { return }
        _ = try await store.recordFirstUse(of: pending.identifier, expiringAt: pending.expiry, now: pending.now)
    }
}
