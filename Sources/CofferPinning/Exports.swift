// Pins, the certificates they are computed from and the pinning error live in CofferPins, which reads
// untrusted bytes without a transport (and so can be fuzzed without SwiftNIO). `import CofferPinning`
// keeps giving them, as it did before they moved.
@_exported public import CofferPins
