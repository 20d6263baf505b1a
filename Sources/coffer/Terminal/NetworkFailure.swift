import AsyncHTTPClient
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import NIOSSL

/// A failed connection or exchange said as what happened (refused, timed out, not trusted, unknown
/// host) with the flag that helps, instead of the networking stack's debug dump (which names BoringSSL
/// internals and paths of the build).
enum NetworkFailure {
    /// The message and hint for `error`, met while asking `host`.
    static func describe(_ error: any Error, host: String, port: Int, timeout: Int64, usedCA: Bool) -> CommandFailure {
        let place = "\(host):\(port)"
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return CommandFailure("connecting to \(place) timed out", hint: "is the host reachable from here? --timeout gives it longer (now \(timeout) s)")
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return CommandFailure("no complete answer from \(place) within \(timeout) s", hint: "--timeout gives it longer")
            case .remoteConnectionClosed: return CommandFailure("\(place) closed the connection before answering")
            default: break
            }
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return CommandFailure("cannot find the host '\(host)' (DNS has no address for it)", hint: "check the name in the URL")
            }
            if let first = error.connectionErrors.first?.error { return describe(first, host: host, port: port, timeout: timeout, usedCA: usedCA) }
        }
        if error is SocketAddressError {
            return CommandFailure("cannot find the host '\(host)' (DNS has no address for it)", hint: "check the name in the URL")
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return CommandFailure("\(place) refused the connection: nothing listens there", hint: "check the port, and that the server runs")
            case ETIMEDOUT: return CommandFailure("connecting to \(place) timed out", hint: "--timeout gives it longer (now \(timeout) s)")
            case EHOSTUNREACH, ENETUNREACH: return CommandFailure("\(place) cannot be reached from here (no route)")
            case ECONNRESET: return CommandFailure("\(place) reset the connection")
            default: return CommandFailure("the connection to \(place) failed: \(String(cString: strerror(error.errnoCode)))")
            }
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return CommandFailure("the server's certificate is not for '\(host)'", hint: "use the host name the certificate names")
        }
        if case .handshakeFailed(let underlying)? = error as? NIOSSLError {
            if "\(underlying)".contains("CERTIFICATE_VERIFY_FAILED") {
                return CommandFailure(
                    "the TLS certificate of \(place) is not trusted: its chain does not lead to \(usedCA ? "the --ca given" : "a root this system trusts")",
                    hint: usedCA ? "is --ca the root that issued the server's chain?" : "for a private CA, pass its root with --ca ROOT.pem (a --pin is checked only on a chain that validates)"
                )
            }
            return CommandFailure("the TLS handshake with \(place) failed", hint: "is it a TLS server? for plain HTTP use an http:// URL")
        }
        if error is NIOSSLError || error is BoringSSLError {
            return CommandFailure("the TLS connection to \(place) failed")
        }
        return CommandFailure("the request to \(place) failed (\(type(of: error)))")
    }
}
