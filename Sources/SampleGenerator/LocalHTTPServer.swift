import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 for tests and benchmarks: a thread per connection, kept
/// alive across requests as HTTP/1.1 allows (closed after a response whose end is the close),
/// every answer from `handler` (which may stall, to test timeouts). It counts the connections
/// it accepted, so a test can tell whether a client reuses them. Call `stop()` to end it.
// Unchecked: every var is read and written under `lock`.
public final class LocalHTTPServer: @unchecked Sendable {
    public struct Request: Sendable {
        public var method: String
        /// Without the leading slash or the query.
        public var path: String
        /// The query's `name=value` pairs (a name without a value: "").
        public var query: [String: String] = [:]
        public var headers: [String: String]
        public var body: [UInt8]
        /// When its head was read.
        public var receivedAt = Date()

        public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.body = body
        }
    }

    public struct Response: Sendable {
        /// What the Content-Length header says.
        public enum Length: Sendable {
            case actual
            /// A claim that need not be true (a hostile server's).
            case claimed(Int)
            /// No header: the body ends when the connection closes.
            case none
        }

        public var status: Int
        public var body: [UInt8]
        public var contentType: String
        /// A value of several lines goes out as that header once per line (Set-Cookie).
        public var headers: [String: String]
        public var length: Length
        /// After `body`, more bytes as long as it likes: `send` returns false once the client is gone.
        public var more: (@Sendable (_ send: ([UInt8]) -> Bool) -> Void)?

        public init(status: Int = 200, body: [UInt8] = [], contentType: String = "application/octet-stream",
                    headers: [String: String] = [:], length: Length = .actual,
                    more: (@Sendable (_ send: ([UInt8]) -> Bool) -> Void)? = nil) {
            self.status = status
            self.body = body
            self.contentType = contentType
            self.headers = headers
            self.length = length
            self.more = more
        }

        public static let notFound = Response(status: 404)

        /// The file at `path` below `root`, or 404.
        public static func file(_ path: String, in root: URL) -> Response {
            (try? Data(contentsOf: root.appendingPathComponent(path))).map { Response(body: [UInt8]($0)) } ?? .notFound
        }
    }

    public let port: UInt16
    public let host: String
    private let socket: Int32
    private let handler: @Sendable (Request) -> Response
    private let lock = NSLock()
    private var log: [Request] = []
    private var stopped = false
    private var accepted = 0
    private var open: Set<Int32> = []

    /// Listens on `host` (a loopback address: 127.0.0.2 stands for another host), on `port` (0: any free one).
    public init(host: String = "127.0.0.1", port: UInt16 = 0, handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        self.host = host
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && listen(socket, 64) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        self.socket = socket
        self.port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    /// A server for the files below `root`.
    public convenience init(host: String = "127.0.0.1", serving root: URL) throws {
        try self.init(host: host) { request in request.method == "GET" ? .file(request.path, in: root) : .notFound }
    }

    public var baseURL: String { "http://\(host):\(port)" }

    public func url(_ path: String) -> String { "\(baseURL)/\(path)" }

    /// Every request answered so far, in order.
    public var requests: [Request] { lock.withLock { log } }

    /// The TCP connections accepted so far.
    public var connections: Int { lock.withLock { accepted } }

    /// The connections open now: one ends when its client closes it.
    public var openConnections: Int { lock.withLock { open.count } }

    /// Ends the accept loop and every open connection, as a server that goes away does. The
    /// threads close the sockets themselves: closing one here could hand its descriptor number to
    /// a new server while the old thread still uses it.
    public func stop() {
        let clients = lock.withLock {
            stopped = true
            return open
        }
        shutdown(socket, Int32(SHUT_RDWR))
        for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func serve() {
        while true {
            let client = accept(socket, nil, nil)
            if lock.withLock({ stopped }) {
                if client >= 0 { close(client) }
                close(socket)
                return
            }
            guard client >= 0 else { continue }
            lock.withLock {
                accepted += 1
                open.insert(client)
            }
            Thread.detachNewThread { [self] in
                while let request = Self.readRequest(client) {
                    lock.withLock { log.append(request) }
                    let response = Self.ranged(handler(request), for: request)
                    let keepAlive = request.headers["connection"]?.lowercased() != "close" && response.more == nil
                        && { if case .actual = response.length { true } else { false } }()
                    guard Self.write(response, to: client, keepAlive: keepAlive, head: request.method == "HEAD"), keepAlive else { break }
                }
                lock.withLock { _ = open.remove(client) }
                close(client)
            }
        }
    }

    private static func readRequest(_ client: Int32) -> Request? {
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var headerEnd: Int?
        while headerEnd == nil {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return nil }
            bytes += buffer.prefix(count)
            headerEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
        }
        let head = String(decoding: bytes[..<headerEnd!], as: UTF8.self).split(separator: "\r\n")
        let requestLine = head.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        while bytes.count - headerEnd! < length {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return nil }
            bytes += buffer.prefix(count)
        }
        let target = requestLine.count > 1 ? String(requestLine[1]) : "/"
        let path = String(target.dropFirst().prefix { $0 != "?" })
        var query: [String: String] = [:]
        for pair in target.drop(while: { $0 != "?" }).dropFirst().split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return Request(method: requestLine.first.map(String.init) ?? "", path: path, query: query, headers: headers,
                       body: Array(bytes[headerEnd!..<headerEnd! + length]))
    }

    /// A `Range: bytes=a-b` request answered from a whole body: 206 with that part (RFC 9110 §14).
    private static func ranged(_ response: Response, for request: Request) -> Response {
        guard response.status == 200, case .actual = response.length, response.more == nil,
              let spec = request.headers["range"], spec.hasPrefix("bytes=") else { return response }
        let bounds = spec.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = bounds.first.flatMap({ Int($0) }), first < response.body.count else { return response }
        let last = min(bounds.count > 1 ? Int(bounds[1]) ?? response.body.count - 1 : response.body.count - 1, response.body.count - 1)
        var partial = response
        partial.status = 206
        partial.body = Array(response.body[first...last])
        partial.headers["Content-Range"] = "bytes \(first)-\(last)/\(response.body.count)"
        return partial
    }

    /// Whether all of it went out.
    @discardableResult
    /// A HEAD request's answer is the head a GET's would have, without its body (RFC 9110 §9.3.2).
    private static func write(_ response: Response, to client: Int32, keepAlive: Bool, head headOnly: Bool) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(response.status < 400 ? "OK" : "Error")\r\nContent-Type: \(response.contentType)\r\n"
        switch response.length {
        case .actual: head += "Content-Length: \(response.body.count)\r\n"
        case .claimed(let length): head += "Content-Length: \(length)\r\n"
        case .none: break
        }
        // A value of several lines is that header several times (Set-Cookie).
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            for line in value.split(separator: "\n") { head += "\(name): \(line)\r\n" }
        }
        head += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        guard send(Array(head.utf8) + (headOnly ? [] : response.body), to: client) else { return false }
        if !headOnly { response.more? { send($0, to: client) } }
        return true
    }

    private static func send(_ bytes: [UInt8], to client: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
