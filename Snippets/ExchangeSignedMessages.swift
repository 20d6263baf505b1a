// Two people exchange ECDSA P-256 public keys, then signed messages; each checks the other's key by a
// fingerprint read aloud, so that a key swapped in transit is caught.
import CofferCrypto
import CofferFormats
import Foundation

let alice = try SigningKey.generate(.p256)
let bob = try SigningKey.generate(.p256)

// Each sends their public key (PEM) over any channel, then they compare fingerprints by voice.
let alicePublicPEM = alice.verifyingKey.pemRepresentation
let aliceAsBobSeesHer = try VerifyingKey(pemRepresentation: alicePublicPEM)
print("Alice reads:", alice.verifyingKey.fingerprint.readAloud)
print("Bob hears:  ", aliceAsBobSeesHer.fingerprint.readAloud)
guard aliceAsBobSeesHer.fingerprint == alice.verifyingKey.fingerprint else { print("keys differ: stop"); exit(1) }

// Alice signs; Bob checks with the key he confirmed, and a changed message fails.
let message = Array("Meet at noon.".utf8)
let signature = try alice.signature(for: message)
print("genuine:", aliceAsBobSeesHer.isValidSignature(signature, for: message))
print("altered:", aliceAsBobSeesHer.isValidSignature(signature, for: Array("Meet at one.".utf8)))

// Bob answers the same way, under the key Alice confirmed with him.
let bobAsAliceSeesHim = try VerifyingKey(pemRepresentation: bob.verifyingKey.pemRepresentation)
let reply = Array("Noon works.".utf8)
print("reply genuine:", bobAsAliceSeesHim.isValidSignature(try bob.signature(for: reply), for: reply))
