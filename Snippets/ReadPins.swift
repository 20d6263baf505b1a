// Reading a pin and a certificate's pins with no network stack: what CofferPins holds, and what
// CofferPinning re-exports.
import CofferPins
// snippet.hide
import CofferTesting

let der = try TestPKI(name: "Snippet").issueServerCertificate(for: ["localhost"]).der
// snippet.show

// A pin as `coffer pin of` prints it, or as a TrustKit configuration holds it.
let pin = try Pin("sha256/pMeQpRQXcxHQK5Jcvi5GpEDjzR0RllN1CqO4m6Jjvrk=")

// The pins of a DER certificate the server sent.
let certificate = try ChainCertificate(der: der)
let matches = certificate.publicKeyPin == pin
// snippet.hide
print("the served certificate matches the pin:", matches)
