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

    /// The probes' paths, open without a token: `/healthz`, `/readyz` and `/metrics` (`refresh`
    /// runs before the metrics are read), for `GET` and for `HEAD` (the headers alone).
    static let probePaths: Set<String> = ["/healthz", "/readyz", "/metrics"]

    static func addProbes(to router: Router<APIContext>, registry: PrometheusCollectorRegistry,
                          refresh: @escaping @Sendable () async -> Void = {}) {
        let ok = { @Sendable () -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        let metrics = { @Sendable () async -> Response in
            await refresh()
            return Self.metrics(registry)
        }
        for (path, answer) in [("healthz", ok), ("readyz", ok)] as [(String, @Sendable () async -> Response)] + [("metrics", metrics)] {
            router.get(RouterPath(path)) { _, _ in await answer() }
            router.head(RouterPath(path)) { _, _ in
                let response = await answer()
                var headers = response.headers
                headers[.contentLength] = response.body.contentLength.map(String.init)
                return Response(status: response.status, headers: headers, body: ResponseBody())
            }
        }
    }

    /// `GET /metrics`: the registry in Prometheus's text format.
    static func metrics(_ registry: PrometheusCollectorRegistry) -> Response {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
    }
}
