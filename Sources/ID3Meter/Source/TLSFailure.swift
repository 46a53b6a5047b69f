extension FetchError {
    /// Why an HTTPS connection was refused, in terms a person can act on: which host, and what
    /// was wrong with its certificate, ours, or the protocol.
    public struct TLSFailure: Error, Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var reason: Reason

        public init(host: String, reason: Reason) {
            self.host = host
            self.reason = reason
        }

        public enum Reason: Sendable, Equatable {
            /// Its certificate is signed by an authority not trusted here (a company's own CA).
            case unknownAuthority
            /// Its certificate has expired, or is not valid yet.
            case expired
            /// Its certificate is for other names than the host asked for.
            case wrongName
            /// It asked for a client certificate and refused the one sent, or that none was.
            case clientCertificateRefused
            /// No TLS version or cipher both sides speak (or it does not speak TLS at all).
            case protocolMismatch
            /// A certificate or key file that could not be read.
            case unusableFile(String)
            /// Anything else, in the TLS library's words.
            case other(String)
        }

        public var description: String {
            let peer = host.isEmpty ? "" : "\(host): "
            switch reason {
            case .unknownAuthority: return peer + "its certificate is signed by an authority this machine does not trust"
            case .expired: return peer + "its certificate has expired (or is not valid yet)"
            case .wrongName: return peer + "its certificate is not for this host name"
            case .clientCertificateRefused: return peer + "it refused the client certificate (or wants one and none was given)"
            case .protocolMismatch: return peer + "no TLS version or cipher in common (is it HTTPS at all?)"
            case .unusableFile(let problem): return "certificate or key file: \(problem)"
            case .other(let words): return peer + "TLS failed: \(words)"
            }
        }
    }
}

/// `FetchError.TLSFailure`, by its short name inside the package (`TLSDiagnosis`, the tests).
package typealias TLSFailure = FetchError.TLSFailure
