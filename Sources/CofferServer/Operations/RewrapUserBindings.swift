import CofferCore

/// The user records a rewrap's data keys are bound to, each read once per pass and checked against its tag.
final class UserBindings {
    enum Found {
        /// The record, checked against its tag.
        case checked(RegisteredUser)
        /// Why the record cannot be used: the label the version is counted under as unopenable.
        case refused(String)
    }

    private let store: any RegistrationStore
    private let keyring: ServerMasterKeyring
    private let acceptingUntagged: Bool
    private var found: [Int64: Found] = [:]

    init(store: any RegistrationStore, keyring: ServerMasterKeyring, acceptingUntagged: Bool) {
        self.store = store
        self.keyring = keyring
        self.acceptingUntagged = acceptingUntagged
    }

    func user(_ id: Int64) async throws -> Found {
        if let known = found[id] { return known }
        let result: Found
        if let record = try await store.user(id: id) {
            do {
                if !(acceptingUntagged && record.tag == nil) { try KeyRecordTag.check(record, keyring: keyring) }
                result = .checked(record)
            } catch {
                result = .refused(error.code == .masterKeyUnavailable ? "(user record under a key not given)" : "(user record does not match its tag)")
            }
        } else {
            result = .refused("(no such user)")
        }
        found[id] = result
        return result
    }
}
