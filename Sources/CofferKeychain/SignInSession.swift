public import CofferCrypto
import Foundation

/// Whether someone is signed in, and who.
public enum SignInState: Sendable, Hashable {
    /// No one is signed in.
    case signedOut
    /// `user` is signed in.
    case signedIn(user: String)
}

/// The sign-in flow on top of a keychain: signing in stores a hash of the password (never the password)
/// as a generic password under the app's service and the user's email; ``isSignedIn`` reads it back;
/// ``signOut()`` deletes it; ``states()`` tells the rest of the app when that changes.
///
/// ```swift
/// let session = SignInSession(service: "com.example.app", keychain: keychain)
/// try session.signIn(user: "ada@example.com", password: password)
/// for await state in session.states() { updateUI(state) }
/// ```
///
/// ``verify(password:)`` checks a password against the stored hash later (to confirm a sensitive action)
/// and upgrades a legacy or weak stored hash to scrypt on success, transparently.
public final class SignInSession: @unchecked Sendable {
    /// The app's service name the credential is stored under.
    public let service: String
    /// The keychain holding it.
    public let keychain: Keychain
    /// How passwords are hashed.
    public let hasher: PasswordHasher
    private let lock = NSLock()
    private var observers: [UUID: AsyncStream<SignInState>.Continuation] = [:]

    /// A session for `service` in `keychain`.
    public init(service: String, keychain: Keychain, hasher: PasswordHasher = PasswordHasher()) {
        self.service = service
        self.keychain = keychain
        self.hasher = hasher
    }

    /// The signed-in user's email, or nil. Reads attributes only, so it works while the keychain is locked.
    public var currentUser: String? {
        get throws(KeychainError) { try keychain.items(matching: .genericPassword(service: service)).first?.account }
    }

    /// Whether someone is signed in.
    public var isSignedIn: Bool {
        get throws(KeychainError) { try currentUser != nil }
    }

    /// The current state.
    public var state: SignInState {
        get throws(KeychainError) { try currentUser.map { .signedIn(user: $0) } ?? .signedOut }
    }

    /// Signs `user` in: stores a fresh scrypt hash of `password` under the service, replacing whoever
    /// was signed in before, and announces the new state.
    /// - Throws: ``KeychainError`` (`.badParameter` for an empty user or password; the keychain's own
    ///   errors, such as `.interactionNotAllowed` while locked).
    public func signIn(user: String, password: String) throws(KeychainError) {
        guard !user.isEmpty, !password.isEmpty else { throw KeychainError(.badParameter, "signing in needs a user and a password") }
        let hash: PasswordHash
        do { hash = try hasher.hash(password: password) } catch { throw KeychainError(.badParameter, error.reason) }
        _ = try? keychain.delete(matching: .genericPassword(service: service))
        try keychain.add(.genericPassword(service: service, account: user), secret: Array(hash.phcString.utf8))
        announce(.signedIn(user: user))
    }

    /// Stores a credential exactly as an older app kept it (for migration): a PHC string or Coffer's
    /// spelling of the legacy SHA-256 scheme (see `StoredPassword`).
    public func importStoredCredential(user: String, _ stored: StoredPassword) throws(KeychainError) {
        _ = try? keychain.delete(matching: .genericPassword(service: service))
        try keychain.add(.genericPassword(service: service, account: user), secret: Array(stored.storedString.utf8))
        announce(.signedIn(user: user))
    }

    /// Whether `password` is the signed-in user's. On success a legacy or below-policy hash is replaced
    /// by a fresh scrypt hash in the same step.
    /// - Throws: `.itemNotFound` when nobody is signed in.
    public func verify(password: String) throws(KeychainError) -> Bool {
        guard let user = try currentUser else { throw KeychainError(.itemNotFound, "nobody is signed in") }
        let query = KeychainQuery.genericPassword(service: service, account: user)
        let text = String(decoding: try keychain.secret(matching: query), as: UTF8.self)
        let result: PasswordVerification
        do {
            // The migration path: a credential imported from an older app may be legacy or below the floor;
            // on a match it is replaced at once (below).
            result = try hasher.verifyInsecureLegacy(password: password, against: StoredPassword(storedString: text, email: user))
        } catch {
            throw KeychainError(.dataCorrupted, "the stored credential is not a password hash: \(error.reason)", underlying: error)
        }
        if let replacement = result.replacement {
            try keychain.update(matching: query, with: KeychainChanges(secret: Array(replacement.phcString.utf8)))
        }
        return result.matches
    }

    /// Signs out: deletes the stored hash and announces it. Signing out when nobody is signed in does nothing.
    public func signOut() throws(KeychainError) {
        do {
            try keychain.delete(matching: .genericPassword(service: service))
        } catch {
            guard error.code == KeychainError.Code.itemNotFound else { throw error }
            return
        }
        announce(.signedOut)
    }

    /// A stream of states: the current one first, then every change made through this session object.
    /// Ends when the consumer stops iterating.
    public func states() -> AsyncStream<SignInState> {
        let (stream, continuation) = AsyncStream<SignInState>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        lock.withLock { observers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.observers.removeValue(forKey: id) }
        }
        continuation.yield((try? state) ?? .signedOut)
        return stream
    }

    private func announce(_ state: SignInState) {
        let current = lock.withLock { Array(observers.values) }
        for observer in current { observer.yield(state) }
    }

    deinit {
        for observer in observers.values { observer.finish() }
    }
}
