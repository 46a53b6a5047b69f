import Foundation
import Hummingbird

/// The request context of `serve`'s API: who is calling, once `APIAccess` has checked.
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The name of the token the request came with; `nil` without tokens (a loopback listener).
    public var caller: String?

    public init(source: Source) {
        coreContext = .init(source: source)
    }
}

/// Reading and changing apart: `/healthz`, `/readyz` and `/metrics` are open (probes and
/// scrapers); everything else needs a token, given as `Authorization: Bearer TOKEN` or as HTTP
/// Basic's password (a browser opening the live page). A read-only token may not change the
/// line-up. Without tokens every request passes: `serve` then listens on loopback only.
struct APIAccess: RouterMiddleware {
    typealias Context = APIContext

    let tokens: APITokens?

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let tokens, !([.get, .head].contains(request.method) && APIServer.probePaths.contains(request.uri.path)) else {
            return try await next(request, context)
        }
        guard let presented = Self.credential(in: request), let token = tokens.token(for: presented) else {
            return Response(status: .unauthorized,
                            headers: [.wwwAuthenticate: #"Bearer realm="id3-meter", Basic realm="id3-meter""#, .contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error":"a token is needed (Authorization: Bearer TOKEN)"}"# + "\n")))
        }
        if ![.get, .head].contains(request.method), token.access != .write {
            return Response(status: .forbidden, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(
                                string: #"{"error":"token '\#(token.name)' is read-only: changes need a write token"}"# + "\n")))
        }
        var context = context
        context.caller = token.name
        return try await next(request, context)
    }

    /// The bearer token, or Basic's password.
    static func credential(in request: Request) -> [UInt8]? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        switch parts[0].lowercased() {
        case "bearer": return Array(parts[1].utf8)
        case "basic":
            guard let decoded = Data(base64Encoded: String(parts[1])), let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            return Array(decoded[(colon + 1)...])
        default: return nil
        }
    }
}
