import CofferKeychain
import CofferTestSupport
import CofferTesting
import PropertyBased
import Testing

/// Random sequences of keychain operations, checked step by step against a model that is a dictionary:
/// what a Keychain Services user expects, including locking (`whenUnlocked` secrets unreadable while
/// locked, `afterFirstUnlock` ones readable once unlocked since the keychain was opened) and, for the
/// SQLite store, closing and reopening the file.
@Suite("Keychain: operation sequences against a model")
struct KeychainModelTests {
    /// Generic passwords are named by service and account; a few of each so that operations collide.
    struct Name: Hashable, CustomStringConvertible {
        let service: String
        let account: String
        var description: String { "\(service)/\(account)" }
    }

    enum Operation: CustomStringConvertible {
        case add(Name, secret: [UInt8], Accessibility)
        case read(Name)
        case updateSecret(Name, [UInt8])
        case relabel(Name, String)
        case rename(Name, to: String)
        case delete(Name)
        case deleteService(String)
        case list(String)
        case lock, unlock, reopen

        var description: String {
            switch self {
            case .add(let name, let secret, let accessibility): "add \(name) (\(secret.count) bytes, \(accessibility.description))"
            case .read(let name): "read \(name)"
            case .updateSecret(let name, let secret): "update \(name) (\(secret.count) bytes)"
            case .relabel(let name, let label): "relabel \(name) as \(label)"
            case .rename(let name, let account): "rename \(name) to \(account)"
            case .delete(let name): "delete \(name)"
            case .deleteService(let service): "delete service \(service)"
            case .list(let service): "list \(service)"
            case .lock: "lock"
            case .unlock: "unlock"
            case .reopen: "reopen"
            }
        }
    }

    static let services = ["com.example.a", "com.example.b"]
    static let accounts = ["ada", "grace", "edsger"]

    static let operations = Generator { rng in
        func name() -> Name {
            Name(service: services.randomElement(using: &rng) ?? "", account: accounts.randomElement(using: &rng) ?? "")
        }
        func secret() -> [UInt8] { rng.bytes(count: Int(rng.next() % 80)) }
        switch rng.next() % 20 {
        case 0...4: return Operation.add(name(), secret: secret(), Accessibility.allCases.randomElement(using: &rng) ?? .whenUnlocked)
        case 5...7: return .read(name())
        case 8, 9: return .updateSecret(name(), secret())
        case 10: return .relabel(name(), "label \(rng.next() % 100)")
        case 11: return .rename(name(), to: accounts.randomElement(using: &rng) ?? "")
        case 12, 13: return .delete(name())
        case 14: return .deleteService(services.randomElement(using: &rng) ?? "")
        case 15: return .list(services.randomElement(using: &rng) ?? "")
        case 16, 17: return .lock
        case 18: return .unlock
        default: return .reopen
        }
    }

    /// What the keychain should hold and whether it should be able to read each secret.
    struct Model {
        struct Entry { var secret: [UInt8]; var accessibility: Accessibility; var label: String? }
        var items: [Name: Entry] = [:]
        var locked = false
        var unlockedSinceOpen = true

        func canRead(_ accessibility: Accessibility) -> Bool { !locked || (accessibility.survivesLock && unlockedSinceOpen) }
    }

    /// Runs one operation on the keychain and on the model, recording an issue when they disagree.
    static func apply(_ operation: Operation, to keychain: inout Keychain, model: inout Model, reopen: () throws -> Keychain) throws {
        func outcome(_ body: () throws -> Void) -> KeychainError.Code? {
            do {
                try body()
                return nil
            } catch let error as KeychainError {
                return error.code
            } catch {
                // Codes are closed: another type's error cannot pass as a code; it fails the run here.
                Issue.record("expected a KeychainError, found \(error)")
                return .badParameter
            }
        }
        func query(_ name: Name) -> KeychainQuery { .genericPassword(service: name.service, account: name.account) }
        let context = Comment(rawValue: "after \(operation)")

        switch operation {
        case .add(let name, let secret, let accessibility):
            // Both a clash and a locked class key refuse the add; when both hold, either may be reported.
            var allowed: Set<KeychainError.Code?> = []
            if model.items[name] != nil { allowed.insert(.duplicateItem) }
            if !model.canRead(accessibility) { allowed.insert(.interactionNotAllowed) }
            if allowed.isEmpty { allowed.insert(nil) }
            let code = outcome { try keychain.add(.genericPassword(service: name.service, account: name.account, accessibility: accessibility), secret: secret) }
            #expect(allowed.contains(code), context)
            if code == nil { model.items[name] = .init(secret: secret, accessibility: accessibility, label: nil) }

        case .read(let name):
            var secret: [UInt8]?
            let code = outcome { secret = try keychain.secret(matching: query(name)) }
            guard let entry = model.items[name] else { #expect(code == .itemNotFound, context); return }
            if model.canRead(entry.accessibility) {
                #expect(code == nil && secret == entry.secret, context)
            } else {
                #expect(code == .interactionNotAllowed, context)
            }

        case .updateSecret(let name, let secret):
            let code = outcome { try keychain.update(matching: query(name), with: KeychainChanges(secret: secret)) }
            guard let entry = model.items[name] else { #expect(code == .itemNotFound, context); return }
            #expect(code == (model.canRead(entry.accessibility) ? nil : .interactionNotAllowed), context)
            if code == nil { model.items[name]?.secret = secret }

        case .relabel(let name, let label):
            var changes = KeychainChanges()
            changes.label = .some(label)
            let code = outcome { try keychain.update(matching: query(name), with: changes) }
            // A label is not sealed with the secret: it changes even while locked.
            #expect(code == (model.items[name] == nil ? .itemNotFound : nil), context)
            if code == nil { model.items[name]?.label = label }

        case .rename(let name, let account):
            var changes = KeychainChanges()
            changes.account = account
            let target = Name(service: name.service, account: account)
            let code = outcome { try keychain.update(matching: query(name), with: changes) }
            guard let entry = model.items[name] else { #expect(code == .itemNotFound, context); return }
            if target == name {
                #expect(code == nil, context)  // the identity does not change: nothing to re-seal
            } else if model.items[target] != nil {
                #expect([KeychainError.Code.duplicateItem, .interactionNotAllowed].contains(code), context)
            } else {
                // Renaming re-seals the secret under the new identity, which needs the class key.
                #expect(code == (model.canRead(entry.accessibility) ? nil : .interactionNotAllowed), context)
            }
            if code == nil, target != name {
                model.items[target] = entry
                model.items[name] = nil
            }

        case .delete(let name):
            let code = outcome { try keychain.delete(matching: query(name)) }
            #expect(code == (model.items[name] == nil ? .itemNotFound : nil), context)
            model.items[name] = nil

        case .deleteService(let service):
            var count = 0
            let code = outcome { count = try keychain.delete(matching: KeychainQuery.genericPassword(service: service).all()) }
            let expected = model.items.keys.filter { $0.service == service }.count
            #expect(code == (expected == 0 ? .itemNotFound : nil) && count == expected, context)
            model.items = model.items.filter { $0.key.service != service }

        case .list(let service):
            let listed = try keychain.items(matching: KeychainQuery.genericPassword(service: service).all())
            let expected = model.items.filter { $0.key.service == service }
            #expect(Set(listed.compactMap(\.account)) == Set(expected.keys.map(\.account)), context)
            for item in listed {
                let entry = expected[Name(service: service, account: item.account ?? "")]
                #expect(item.label == entry?.label && item.accessibility == entry?.accessibility, context)
            }

        case .lock:
            keychain.lock()
            model.locked = true

        case .unlock:
            try keychain.unlock(password: Fixture.password)
            model.locked = false
            model.unlockedSinceOpen = true

        case .reopen:
            keychain = try reopen()
            model.locked = true
            model.unlockedSinceOpen = false
        }
    }

    @Test(arguments: StoreKind.allCases)
    func operationSequencesAgreeWithTheModel(kind: StoreKind) async throws {
        await propertyCheck(count: kind == .memory ? 80 : 30, input: Self.operations.array(of: 1...30)) { operations in
            let fixture = try Fixture(kind)
            defer { withExtendedLifetime(fixture) {} }
            var keychain = fixture.keychain
            var model = Model()
            for operation in operations {
                // The in-memory store has no file to reopen: there, reopening is locking.
                let step: Operation = if case .reopen = operation, kind == .memory { .lock } else { operation }
                try Self.apply(step, to: &keychain, model: &model, reopen: fixture.reopen)
            }
            // Whatever happened, the final state reads back in full once unlocked.
            try keychain.unlock(password: Fixture.password)
            for (name, entry) in model.items {
                #expect(try keychain.secret(matching: .genericPassword(service: name.service, account: name.account)) == entry.secret, "\(name)")
            }
            #expect(try keychain.items(matching: KeychainQuery.genericPassword().all()).count == model.items.count)
        }
    }
}
