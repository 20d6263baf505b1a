/// Asks `condition` again and again until it holds or `limit` has passed, and says whether it held: for
/// a state another process reaches in its own time (a server reconnecting to its database, a proxy
/// starting). It bounds the wait and never measures it. A count of tries is no such bound: answered at
/// once, 40 tries took a fifth of a second, less than a server's one-second retry.
public func eventually(within limit: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    repeat {
        if try await condition() { return true }
        await Task.yield()
    } while ContinuousClock.now < deadline
    return false
}
