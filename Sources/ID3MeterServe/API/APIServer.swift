import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import Prometheus

/// What `serve`'s API and `collect` serve alike: the HTTP/1.1 server with each connection
/// guarded (`APIConnectionGuard`) and heads held to `APIPolicy`'s limits, and the metrics page.
enum APIServer {
    /// The server, over TLS when `tls` is given.
    static func builder(connections: APIConnections, policy: APIPolicy, tls: TLSConfiguration?) throws -> HTTPServerBuilder {
        let timeout = TimeAmount.milliseconds(Int64(policy.requestTimeout * 1_000))
        let http = HTTPServerBuilder.http1(configuration: HTTP1Channel.Configuration(
            additionalChannelHandlers: [APIConnectionGuard(connections: connections, timeout: timeout)],
            httpDecoderConfiguration: .init(maxHeaderFieldSize: APIPolicy.maximumHeadBytes, maxHeaderListSize: APIPolicy.maximumHeadBytes,
                                            maxHeaderFieldCount: APIPolicy.maximumHeaderCount)))
        return try tls.map { try .tls(http, tlsConfiguration: $0) } ?? http
    }

    /// `GET /metrics`: the registry in Prometheus's text format.
    static func metrics(_ registry: PrometheusCollectorRegistry) -> Response {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
    }
}
