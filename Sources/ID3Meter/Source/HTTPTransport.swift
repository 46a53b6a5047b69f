import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// HTTP(S) through async-http-client: connections kept alive and pooled across segments,
/// reloads and streams, waiting on the network without a thread per stream. Redirects are
/// followed here, not by the client, so that each hop is checked: http(s) with a host only,
/// at most `maximumRedirects`, credentials not sent on to another host.
struct HTTPTransport: Sendable {
    static let maximumRedirects = 8

    var ioTimeout: Double
    var headers: [Fetcher.Header]
    /// Checked for every host a request goes to, redirects included.
    var hostRule: Fetcher.HostRule?
    var connections: HTTPConnections
    /// The session's cookies: sent where they apply, and what each response sets kept.
    var cookies: CookieJar?
    var tls = Fetcher.TLS()
    var proxy: Fetcher.Proxy?

    /// Hands the body of `url` (its `range`) to `consume`, at most `limit` bytes (decoded, when
    /// it came compressed), by `deadline`, awaiting `afterEachChunk` after each piece (the body is
    /// not read on while it waits). `compressed` asks for a compressed body (`Accept-Encoding`);
    /// whatever `Content-Encoding` arrives is undone either way. `prefix` stops, without an error,
    /// once that many bytes are handed over. `method` `.HEAD` reads the answer's head alone.
    @discardableResult
    func read(_ url: String, method: HTTPMethod = .GET, range: ByteRange?, limit: Int, resource: Fetcher.Limits.Resource,
              deadline seconds: Double?, compressed: Bool = false, prefix: Int? = nil,
              afterEachChunk: () async -> Void, consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(FetchError) -> Answer {
        // The client's deadline covers the response head; the body is checked as it comes, idle
        // waits ending after `ioTimeout`, so a trickle ends within that of its deadline.
        // A library caller's value may be anything: a Duration of an infinite or NaN value traps.
        let deadline = seconds.map { ContinuousClock.now + .seconds(Self.bounded($0)) }
        var location = url
        var headers = self.headers
        for hop in 0...Self.maximumRedirects {
            if let hostRule, let host = URL(string: location)?.host, let refusal = await hostRule.refusal(of: host) {
                throw .refused(refusal)
            }
            var request = HTTPClientRequest(url: location)
            request.method = method
            if !headers.contains(where: { $0.name.lowercased() == "user-agent" }) {
                request.headers.add(name: "User-Agent", value: "id3-meter/\(ID3MeterVersion.current)")
            }
            for header in headers { request.headers.add(name: header.name, value: header.value) }
            if let range { request.headers.replaceOrAdd(name: "Range", value: "bytes=\(range.offset)-\(range.end - 1)") }
            // Ranges count the bytes as stored: a sub-range is never asked compressed.
            if compressed, range == nil { request.headers.replaceOrAdd(name: "Accept-Encoding", value: ContentDecoding.accepted) }
            let target = URL(string: location)
            // Each hop its own route: a redirect may leave the proxy's reach (no_proxy) or enter it.
            let route = HTTPConnections.Route(tls: tls, proxy: target.flatMap { proxy?.server(for: $0) })
            guard let client = try connections.client(for: route) else { throw .connection("its HTTPConnections were shut down") }
            if let cookies, let target, let jar = cookies.header(for: target) {
                let own = request.headers["cookie"]
                request.headers.replaceOrAdd(name: "Cookie", value: (own + [jar]).joined(separator: "; "))
            }
            // A cancelled reader starts no request: its caller may be shutting the connections
            // down, and a request begun on a loop that is closing leaves a promise no one keeps
            // (NIO traps on it in debug builds; LibraryResourceTests under load).
            guard !Task.isCancelled else { throw .cancelled }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: Self.nioDeadline(deadline), logger: connections.logger)
            } catch {
                if let failure = await TLSDiagnosis.failure(error, url: target, direct: route.proxy == nil) { throw .tls(failure) }
                throw Self.failure(error, deadline: seconds, ioTimeout: ioTimeout)
            }
            // A CDN hands its token as it answers, a redirect included.
            if let cookies, let target { cookies.store(response.headers["set-cookie"], from: target) }
            let status = Int(response.status.code)
            if (300..<400).contains(status), let target = response.headers.first(name: "location") {
                try Self.follow(target, hop: hop, from: &location, headers: &headers)
                continue
            }
            guard (200..<300).contains(status) else { throw .http(status: status, reason: response.status.reasonPhrase) }
            let answer = Answer(contentType: response.headers.first(name: "content-type"),
                                date: response.headers.first(name: "date").flatMap(Self.httpDate), location: location)
            if method == .HEAD { return answer }
            let declared = response.headers.first(name: "content-length").flatMap { Int64($0) }
            // A declared size is a claim, used only to refuse early, never to allocate (a sub-range's is the playlist's).
            if range == nil, prefix == nil, let declared, declared > limit { throw .tooLarge(resource, limit: limit, declared: declared) }
            let decoding = try ContentDecoding(encoding: response.headers.first(name: "content-encoding"))
            if decoding != nil, range != nil, status == 206 { throw .encoding(response.headers.first(name: "content-encoding")) }
            // A server that ignores the Range header sends the whole resource: its front is stepped over.
            var skip = range != nil && status != 206 ? range!.offset : 0
            let wanted = range?.length ?? prefix ?? .max
            var total = 0
            func take(_ piece: UnsafeBufferPointer<UInt8>) throws(FetchError) {
                let skipped = min(skip, piece.count)
                skip -= skipped
                let count = min(piece.count - skipped, wanted - total)
                guard count > 0 else { return }
                total += count
                if total > limit { throw FetchError.tooLarge(resource, limit: limit, declared: nil) }
                consume(UnsafeBufferPointer(rebasing: piece[skipped..<skipped + count]))
            }
            do {
                for try await buffer in response.body {
                    if let deadline, ContinuousClock.now > deadline { throw FetchError.deadline(seconds ?? 0) }
                    try buffer.withUnsafeReadableBytes { bytes throws(FetchError) in
                        if let decoding { return try decoding.decode(bytes, consume: take) }
                        try take(UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
                    }
                    await afterEachChunk()
                    if total == wanted { break }
                }
            } catch let error as FetchError {
                throw error
            } catch {
                throw Self.failure(error, deadline: seconds, ioTimeout: ioTimeout)
            }
            if let range, total < range.length { throw .shortRange(range, got: total) }
            return answer
        }
        throw .redirect("redirected more than \(Self.maximumRedirects) times")
    }

    /// What a response's head said that a reader of its body may want.
    struct Answer: Sendable {
        var contentType: String?
        /// `Date`: the server's clock when it answered, to the second.
        var date: Date?
        /// Where the answer came from, after redirects: what a document's relative references
        /// are resolved against, as players do.
        var location: String
    }

    /// Scheme, host and port, as a browser's same-origin rule compares them.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// Seconds a `Duration` can hold, for values that come from a caller.
    static func bounded(_ seconds: Double) -> Double { seconds.isNaN ? 0 : min(max(seconds, 0), 1e9) }

    /// One hop of a redirect from `location` to `target`: http(s) with a host only, at most
    /// `maximumRedirects`, credentials dropped when the origin changes.
    private static func follow(_ target: String, hop: Int, from location: inout String, headers: inout [Fetcher.Header]) throws(FetchError) {
        guard hop < maximumRedirects else { throw .redirect("redirected more than \(maximumRedirects) times") }
        guard let next = URL(string: target, relativeTo: URL(string: location))?.absoluteURL,
              ["http", "https"].contains(next.scheme?.lowercased() ?? ""), next.host?.isEmpty == false else {
            throw .redirect("redirected to \(target), which is not http(s) with a host")
        }
        if origin(of: next) != URL(string: location).map(origin) { headers.removeAll(where: \.isCredential) }
        location = next.absoluteString
    }

    /// What a collector answered a POST.
    struct PostAnswer: Sendable, Equatable {
        var status: Int
        /// `Retry-After`, in seconds from now (a number of seconds or an HTTP date), at most an hour.
        var retryAfter: Double?
        /// The first bytes of the body, for the log.
        var bodyStart: String
    }

    /// POSTs `body` with `headers` on the shared pool, following redirects as `read` does (the
    /// body posted again at each hop, as 307 and 308 ask).
    static func post(_ body: [UInt8], to url: String, headers: [Fetcher.Header], timeout: Double) async throws(FetchError) -> PostAnswer {
        var location = url
        var headers = headers
        for hop in 0...maximumRedirects {
            var request = HTTPClientRequest(url: location)
            request.method = .POST
            request.headers.add(name: "User-Agent", value: "id3-meter/\(ID3MeterVersion.current)")
            for header in headers { request.headers.add(name: header.name, value: header.value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            let seconds = min(max(bounded(timeout), 0.001), 1e6)
            var answer: PostAnswer
            do {
                guard let client = HTTPConnections.shared(ioTimeout: timeout).client else { throw HTTPClientError.alreadyShutdown }
                let response = try await client.execute(request, timeout: .nanoseconds(Int64(seconds * 1e9)))
                let status = Int(response.status.code)
                if (300..<400).contains(status), let target = response.headers.first(name: "location") {
                    try follow(target, hop: hop, from: &location, headers: &headers)
                    continue
                }
                answer = PostAnswer(status: status, retryAfter: response.headers.first(name: "retry-after").flatMap { retryAfter($0) },
                                    bodyStart: "")
                // Read so that the connection can serve the next batch; a long answer is not worth it.
                var start: [UInt8] = []
                var total = 0
                for try await buffer in response.body {
                    total += buffer.readableBytes
                    if start.count < 200 { start += buffer.readableBytesView.prefix(200 - start.count) }
                    if total > 1 << 20 { break }
                }
                answer.bodyStart = String(decoding: start, as: UTF8.self)
            } catch let error as FetchError {
                throw error
            } catch {
                throw failure(error, deadline: nil, ioTimeout: timeout)
            }
            return answer
        }
        throw .redirect("redirected more than \(maximumRedirects) times")
    }

    /// A `Retry-After` value in seconds from now: delta-seconds or an HTTP date, at most an hour.
    static func retryAfter(_ value: String, now: Date = Date()) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds.isFinite, seconds >= 0 { return min(seconds, 3_600) }
        return httpDate(trimmed).map { min(max($0.timeIntervalSince(now), 0), 3_600) }
    }

    /// An HTTP date in its one current form, IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), read
    /// by hand: ICU's date parser has trapped on odd input, and this comes from over the network.
    static func httpDate(_ value: String) -> Date? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let clock = parts.count == 6 ? parts[4].split(separator: ":").compactMap({ Int32($0) }) : []
        guard parts.count == 6, parts[5] == "GMT", clock.count == 3, let day = Int32(parts[1]), let year = Int32(parts[3]),
              let month = months.firstIndex(of: String(parts[2])), (1...31).contains(day), (1970...9999).contains(year),
              (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday) = (year - 1900, Int32(month), day)
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (clock[0], clock[1], clock[2])
        return Date(timeIntervalSince1970: Double(timegm(&fields)))
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
        // NIO's own words wrap the system's ("connection reset (error set): Connection refused)
        // (errno: 111)"); the system's alone say it.
        if let error = error as? IOError { return .connection(String(cString: strerror(error.errnoCode))) }
        if let error = error as? NIOConnectionError, let cause = error.connectionErrors.lazy.compactMap({ $0.error as? IOError }).first {
            return .connection(String(cString: strerror(cause.errnoCode)))
        }
        return .connection(String(describing: error))
    }
}
