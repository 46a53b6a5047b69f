import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Turns what NIOSSL and async-http-client throw for a refused HTTPS connection into a
/// `TLSFailure`. BoringSSL says only "CERTIFICATE_VERIFY_FAILED" for an untrusted and for an
/// expired certificate alike, so for that one the server's certificate is fetched again, over a
/// connection that verifies nothing and carries nothing (closed after the handshake), and its
/// dates tell the two apart.
enum TLSDiagnosis {
    /// The failure `error` is, for a request to `url` (`direct`: not through a proxy, so that
    /// the server can be asked again); `nil` when it is not a TLS failure.
    static func failure(_ error: any Error, url: URL?, direct: Bool) async -> TLSFailure? {
        let host = url?.host ?? ""
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname { return TLSFailure(host: host, reason: .wrongName) }
        let words: String
        switch error {
        case NIOSSLError.handshakeFailed(let failure): words = String(describing: failure)
        case let error as NIOSSLError: words = String(describing: error)
        // TLS 1.3: the server's alert about our certificate comes after our side of the handshake.
        case let error as BoringSSLError: words = String(describing: error)
        default: return nil
        }
        let upper = words.uppercased()
        if upper.contains("CERTIFICATE_VERIFY_FAILED") {
            guard direct, let url, let certificate = await peerCertificate(of: url) else { return TLSFailure(host: host, reason: .unknownAuthority) }
            let now = time(nil)
            return TLSFailure(host: host, reason: certificate.notValidAfter < now || certificate.notValidBefore > now ? .expired : .unknownAuthority)
        }
        let clientCertificate = ["CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN", "ACCESS_DENIED", "HANDSHAKE_FAILURE_ON_CLIENT_HELLO"]
        if upper.contains("ALERT"), clientCertificate.contains(where: upper.contains) { return TLSFailure(host: host, reason: .clientCertificateRefused) }
        let protocolWords = ["WRONG_VERSION_NUMBER", "UNSUPPORTED_PROTOCOL", "PROTOCOL_VERSION", "NO_SHARED_CIPHER", "NO_CIPHERS", "HTTP_REQUEST"]
        if protocolWords.contains(where: upper.contains) { return TLSFailure(host: host, reason: .protocolMismatch) }
        return TLSFailure(host: host, reason: .other(words))
    }

    /// The certificate `url`'s server presents, read without verifying it; `nil` when it cannot
    /// be had within five seconds.
    private static func peerCertificate(of url: URL) async -> NIOSSLCertificate? {
        guard let host = url.host else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let serverName = host.first?.isNumber == true || host.contains(":") ? nil : host
        let bootstrap = ClientBootstrap(group: HTTPClient.defaultEventLoopGroup)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: serverName))
                }
            }
        guard let channel = try? await bootstrap.connect(host: host, port: url.port ?? 443).get() else { return nil }
        defer { channel.close(promise: nil) }
        // The handshake is done once the handler has a peer certificate: asked a few times a second.
        for _ in 0..<50 {
            // The handler is not Sendable: it is looked up and read on its own event loop.
            let certificate = try? await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).peerCertificate
            }.get()
            if let certificate = certificate ?? nil { return certificate }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
