import Hummingbird

/// The methods each of an API's paths answers: another method on a known path is 405 with
/// `Allow` (RFC 9110 15.5.6), not a 404 that says the path is not there.
struct APIMethods: RouterMiddleware {
    typealias Context = APIContext

    /// The methods of `path`; `nil` for a path the API does not know (a 404 then).
    let allowed: @Sendable (_ path: String) -> [HTTPRequest.Method]?

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let methods = allowed(request.uri.path) else { return try await next(request, context) }
        guard methods.contains(request.method) else {
            let allow = methods.map(\.rawValue).joined(separator: ", ")
            return Response(status: .methodNotAllowed, headers: [.allow: allow, .contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error":"\#(request.uri.path) answers \#(allow)"}"# + "\n")))
        }
        return try await next(request, context)
    }
}
