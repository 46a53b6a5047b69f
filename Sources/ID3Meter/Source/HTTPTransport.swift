import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// HTTP(S) through async-http-client: connections kept alive and pooled across segments,
/// reloads and streams, waiting on the network without a thread per stream. Redirects are
/// followed here, not by the client, so that each hop is checked: http(s) with a host only,
/// at most `maximumRedirects`, credentials not sent on to another host.
struct HTTPTransport: Sendable {
    static let maximumRedirects = 8

    var ioTimeout: Double
    var headers: [HTTPHeader]

    /// One client per idle timeout, for the life of the process: its pool is what is shared,
    /// and a client that is never released needs no shutdown.
    private static let clients = Mutex<[Int64: HTTPClient]>([:])

    private static func client(ioTimeout: Double) -> HTTPClient {
        let nanoseconds = Int64(min(max(bounded(ioTimeout), 0.001), 1e6) * 1e9)
        return clients.withLock { clients in
            if let client = clients[nanoseconds] { return client }
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(connect: .nanoseconds(nanoseconds), read: .nanoseconds(nanoseconds)))
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            // A refused connection is reported at once; `Fetcher.RetryPolicy` decides what is tried again.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[nanoseconds] = client
            return client
        }
    }

    /// Hands the body of `url` (its `range`) to `consume`, at most `limit` bytes, by `deadline`.
    func read(_ url: String, range: ByteRange?, limit: Int, resource: FetchLimits.Resource, deadline seconds: Double?,
              consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(FetchError) {
        // The client's deadline covers the response head; the body is checked as it comes, idle
        // waits ending after `ioTimeout`, so a trickle ends within that of its deadline.
        // A library caller's value may be anything: a Duration of an infinite or NaN value traps.
        let deadline = seconds.map { ContinuousClock.now + .seconds(Self.bounded($0)) }
        let client = Self.client(ioTimeout: ioTimeout)
        var location = url
        var headers = self.headers
        for hop in 0...Self.maximumRedirects {
            var request = HTTPClientRequest(url: location)
            if !headers.contains(where: { $0.name.lowercased() == "user-agent" }) {
                request.headers.add(name: "User-Agent", value: "id3-meter/\(ID3MeterVersion.current)")
            }
            for header in headers { request.headers.add(name: header.name, value: header.value) }
            if let range { request.headers.replaceOrAdd(name: "Range", value: "bytes=\(range.offset)-\(range.end - 1)") }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: Self.nioDeadline(deadline))
            } catch {
                throw Self.failure(error, deadline: seconds, ioTimeout: ioTimeout)
            }
            let status = Int(response.status.code)
            if (300..<400).contains(status), let target = response.headers.first(name: "location") {
                guard hop < Self.maximumRedirects else { throw .redirect("redirected more than \(Self.maximumRedirects) times") }
                guard let next = URL(string: target, relativeTo: URL(string: location))?.absoluteURL,
                      ["http", "https"].contains(next.scheme?.lowercased() ?? ""), next.host?.isEmpty == false else {
                    throw .redirect("redirected to \(target), which is not http(s) with a host")
                }
                if Self.origin(of: next) != URL(string: location).map(Self.origin) { headers.removeAll(where: \.isCredential) }
                location = next.absoluteString
                continue
            }
            guard (200..<300).contains(status) else { throw .http(status: status, reason: response.status.reasonPhrase) }
            let declared = response.headers.first(name: "content-length").flatMap { Int64($0) }
            // A declared size is a claim, used only to refuse early, never to allocate (a sub-range's is the playlist's).
            if range == nil, let declared, declared > limit { throw .tooLarge(resource, limit: limit, declared: declared) }
            // A server that ignores the Range header sends the whole resource: its front is stepped over.
            var skip = range != nil && status != 206 ? range!.offset : 0
            let wanted = range?.length ?? .max
            var total = 0
            do {
                for try await buffer in response.body {
                    if let deadline, ContinuousClock.now > deadline { throw FetchError.deadline(seconds ?? 0) }
                    var piece = buffer
                    let skipped = min(skip, piece.readableBytes)
                    piece.moveReaderIndex(forwardBy: skipped)
                    skip -= skipped
                    let count = min(piece.readableBytes, wanted - total)
                    guard count > 0 else { continue }
                    total += count
                    if total > limit { throw FetchError.tooLarge(resource, limit: limit, declared: nil) }
                    piece.withUnsafeReadableBytes { consume(UnsafeBufferPointer(rebasing: $0.assumingMemoryBound(to: UInt8.self)[..<count])) }
                    if total == wanted { break }
                }
            } catch let error as FetchError {
                throw error
            } catch {
                throw Self.failure(error, deadline: seconds, ioTimeout: ioTimeout)
            }
            if let range, total < range.length { throw .shortRange(range, got: total) }
            return
        }
    }

    /// Scheme, host and port, as a browser's same-origin rule compares them.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// Seconds a `Duration` can hold, for values that come from a caller.
    static func bounded(_ seconds: Double) -> Double { seconds.isNaN ? 0 : min(max(seconds, 0), 1e9) }

    /// POSTs `body` and returns the status: for the collector, on the same pool.
    static func post(_ body: [UInt8], to url: String, contentType: String, timeout: Double) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.headers.add(name: "User-Agent", value: "id3-meter/\(ID3MeterVersion.current)")
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client(ioTimeout: timeout).execute(request, timeout: .nanoseconds(Int64(min(max(bounded(timeout), 0.001), 1e6) * 1e9)))
        // The answer's body is not needed, but is read so that the connection can serve the next batch.
        for try await _ in response.body {}
        return Int(response.status.code)
    }

    private static func nioDeadline(_ deadline: ContinuousClock.Instant?) -> NIODeadline {
        guard let deadline else { return .distantFuture }
        let left = ContinuousClock.now.duration(to: deadline)
        return .now() + .nanoseconds(max(0, left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000))
    }

    /// What went wrong on the way, in words a person can act on.
    private static func failure(_ error: any Error, deadline: Double?, ioTimeout: Double) -> FetchError {
        if error is CancellationError { return .cancelled }
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout: return .idle(ioTimeout)
            case .connectTimeout: return .connection("could not connect within \(FetchError.seconds(ioTimeout)) s")
            case .deadlineExceeded: return .deadline(deadline ?? 0)
            case .cancelled: return .cancelled
            case .remoteConnectionClosed: return .connection("the server closed the connection early")
            default: return .connection(String(describing: error))
            }
        }
        if let error = error as? IOError { return .connection(error.description) }
        return .connection(String(describing: error))
    }
}
