import CofferCrypto
import Foundation
import NIOCore
import NIOSSL

/// The server's TLS certificate chain and private key, read from PEM files and replaced in place by
/// ``reload()``: each new TLS handshake takes the pair loaded last, and connections already open keep
/// theirs. A pair that does not load (a file missing, a key that is not the certificate's) is refused
/// with the file named, and the pair in use stays.
public final class ServerCertificate: @unchecked Sendable {
    /// The certificate chain's file (PEM, the server's certificate first).
    public let certificatePath: String
    /// The private key's file (PEM).
    public let keyPath: String
    private let lock = NSLock()
    private var current: (chain: [NIOSSLCertificateSource], key: NIOSSLPrivateKeySource)

    /// Reads the pair and checks that the key is the certificate's.
    /// - Throws: ``ServerConfigurationError`` `.invalidTLSCertificate` naming the file at fault.
    public init(certificatePath: String, keyPath: String) throws(ServerConfigurationError) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        current = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
    }

    /// Reads the files again and, when they load, makes them the pair new handshakes use.
    /// - Throws: ``ServerConfigurationError`` `.invalidTLSCertificate` naming the file at fault; the
    ///   pair in use is unchanged then.
    public func reload() throws(ServerConfigurationError) {
        let pair = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
        lock.withLock { current = pair }
    }

    /// The pair new handshakes use.
    var pair: (chain: [NIOSSLCertificateSource], key: NIOSSLPrivateKeySource) { lock.withLock { current } }

    /// The SHA-256 fingerprint (hex) of the certificate in use, for the log line of a reload.
    var fingerprint: String {
        guard case .certificate(let certificate)? = pair.chain.first, let der = try? certificate.toDERBytes() else { return "" }
        return DigestAlgorithm.sha256.hash(der).hex
    }

    /// A server TLS configuration (from `base`) whose every handshake asks this object for the pair.
    func configuration(_ base: TLSConfiguration) -> TLSConfiguration {
        var configuration = base
        configuration.sslContextCallback = { [self] _, promise in
            var override = NIOSSLContextConfigurationOverride()
            let (chain, key) = pair
            override.certificateChain = chain
            override.privateKey = key
            promise.succeed(override)
        }
        return configuration
    }

    private static func load(certificatePath: String, keyPath: String) throws(ServerConfigurationError) -> (chain: [NIOSSLCertificateSource], key: NIOSSLPrivateKeySource) {
        let chain: [NIOSSLCertificateSource]
        do {
            let certificates = try NIOSSLCertificate.fromPEMFile(certificatePath)
            guard !certificates.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
            chain = certificates.map { .certificate($0) }
        } catch {
            throw ServerConfigurationError(.invalidTLSCertificate, "the TLS certificate \(certificatePath) cannot be read as PEM certificates (\(error))", underlying: error)
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ServerConfigurationError(.invalidTLSCertificate, "the TLS key \(keyPath) cannot be read as a PEM private key (\(error))", underlying: error)
        }
        // A context checks that the key is the certificate's (BoringSSL's SSL_CTX_check_private_key).
        do {
            _ = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
        } catch {
            throw ServerConfigurationError(
                .invalidTLSCertificate, "the TLS key \(keyPath) is not the key of the certificate \(certificatePath)",
                hint: "give the private key that was made with the certificate", underlying: error
            )
        }
        return (chain, .privateKey(key))
    }
}
