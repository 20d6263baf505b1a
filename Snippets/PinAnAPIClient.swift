// An AsyncHTTPClient for one API host, pinned on top of normal validation: the chain must be trusted
// and name the host, then one of the host's pins must match a certificate of the validated chain.
import AsyncHTTPClient
import CofferPinning

// The pins of the key the server uses now and of a backup key kept offline (`coffer pin of KEY`).
let policy = try PinningPolicy(hosts: [
    HostPins(host: "api.example.com", pins: [try Pin("sha256/pMeQpRQXcxHQK5Jcvi5GpEDjzR0RllN1CqO4m6Jjvrk="), try Pin("sha256/PPY1KBx1Ir0MS/M/8estS7NLnErCr6DUkKdLiKXW7CQ=")]),
])
let evaluator = PinningEvaluator(policy: policy)

// AsyncHTTPClient: one client per host, bound to it; the host asked for chooses the pins.
let api = HTTPClient(eventLoopGroupProvider: .singleton,
                     configuration: try .pinned(by: evaluator, host: "api.example.com"))
// snippet.hide
try await api.shutdown().get()
print(policy)
