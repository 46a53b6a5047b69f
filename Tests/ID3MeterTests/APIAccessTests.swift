import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SampleGenerator

/// serve's API as a control plane, against the real binary: tokens, read and write apart,
/// loopback only without them, an audit trail of every change.
@Suite("serve's API access", .serialized, .timeLimit(.minutes(2)))
struct APIAccessTests {
    static let write = "ops-token-0123456789abcdef"
    static let read = "viewer-token-0123456789abcdef"

    /// One HTTP/1.1 request over a plain socket, the connection closed after it: URLSession on
    /// Linux (libcurl) takes a 401 with WWW-Authenticate as a challenge to answer, and waits.
    static func request(_ method: String, _ url: String, authorization: String? = nil, body: String? = nil) throws
        -> (status: Int, body: String, headers: [String: String]) {
        let parsed = try #require(URL(string: url))
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(parsed.host ?? "127.0.0.1")
        address.sin_port = UInt16(parsed.port ?? 80).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        let payload = Array((body ?? "").utf8)
        var head = "\(method) \(parsed.path.isEmpty ? "/" : parsed.path) HTTP/1.1\r\nHost: \(parsed.host ?? ""):\(parsed.port ?? 80)\r\n"
            + "Connection: close\r\nContent-Length: \(payload.count)\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + payload
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = (parts.first ?? "").components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"), headers)
    }

    @Test func withoutTokensANonLoopbackListenerIsRefused() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("lineup.yaml")
        try "channels:\n  - {name: a, url: \"http://127.0.0.1:9/a.m3u8\"}\n".write(to: config, atomically: true, encoding: .utf8)
        let result = try Command.run(["serve", config.path, "--listen", "0.0.0.0:0"], environment: ["ID3METER_API_TOKENS": ""])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--listen 0.0.0.0:0 would let anyone who reaches it read and change the line-up: give --api-tokens"),
                "\(result.stderr)")
        let short = folder.appendingPathComponent("tokens")
        try "ops write short\n".write(to: short, atomically: true, encoding: .utf8)
        let weak = try Command.run(["serve", config.path, "--listen", "0.0.0.0:0", "--api-tokens", short.path])
        #expect(weak.status == 1 && weak.stderr.contains("token 'ops' is shorter than 16 characters"), "\(weak.stderr)")
    }

    @Test func tokensSeparateReadingFromChangingAndEveryChangeIsAudited() throws {
        let server = try LineupServer(["a": ServeTests.channel(seed: 1), "b": ServeTests.channel(seed: 2)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("lineup.yaml")
        try "api_hosts: [127.0.0.1]\nchannels:\n  - {name: a, url: \"\(server.url("a"))\"}\n".write(to: config, atomically: true, encoding: .utf8)
        let tokens = folder.appendingPathComponent("tokens")
        try "# who may use the API\nops write \(Self.write)\nviewer read \(Self.read)\n".write(to: tokens, atomically: true, encoding: .utf8)
        let (process, out, err) = try Command.launch(["serve", config.path, "--listen", "0.0.0.0:0", "--api-tokens", tokens.path])
        defer { if process.isRunning { process.terminate() } }
        let listening = try #require(ServeCommandTests.apiAddress(from: err).address)
        let port = try #require(listening.split(separator: ":").last)
        let api = "http://127.0.0.1:\(port)"

        // Probes and scrapes are open; the rest needs a token.
        #expect(try Self.request("GET", "\(api)/healthz").status == 200)
        #expect(try Self.request("GET", "\(api)/readyz").status == 200)
        #expect(try Self.request("GET", "\(api)/metrics").status == 200)
        for (method, path) in [("GET", "channels"), ("GET", "timeline"), ("GET", ""), ("DELETE", "channels/a")] {
            let refused = try Self.request(method, "\(api)/\(path)")
            #expect(refused.status == 401, "\(method) /\(path)")
            #expect(refused.headers["www-authenticate"]?.contains("Bearer") == true, "\(refused.headers)")
        }
        #expect(try Self.request("GET", "\(api)/channels", authorization: "Bearer not-a-token-at-all-00000").status == 401)
        #expect(try Self.request("GET", "\(api)/channels", authorization: "Bearer \(Self.read)").status == 200)
        let basic = "Basic " + Data("anyone:\(Self.read)".utf8).base64EncodedString()
        #expect(try Self.request("GET", "\(api)/channels", authorization: basic).status == 200, "a browser's Basic password")
        let body = #"{"name": "b", "url": "\#(server.url("b"))"}"#
        let readOnly = try Self.request("PUT", "\(api)/channels/b", authorization: "Bearer \(Self.read)", body: body)
        #expect(readOnly.status == 403 && readOnly.body.contains("read-only"), "\(readOnly)")
        #expect(try Self.request("PUT", "\(api)/channels/b", authorization: "Bearer \(Self.write)", body: body).status == 201)
        let moved = #"{"name": "b", "url": "\#(server.url("a"))"}"#
        #expect(try Self.request("PUT", "\(api)/channels/b", authorization: "Bearer \(Self.write)", body: moved).status == 200)
        #expect(try Self.request("DELETE", "\(api)/channels/b", authorization: "Bearer \(Self.write)").status == 204)
        kill(process.processIdentifier, SIGHUP)

        let reader = RecordReader(out)
        var changes: [[String: Any]] = []
        reader.read { record in
            if record["type"] as? String == "config_change" { changes.append(record) }
            return changes.count == 4
        }
        kill(process.processIdentifier, SIGTERM)
        reader.read { _ in false }
        process.waitUntilExit()
        #expect(changes.map { $0["action"] as? String } == ["add", "replace", "delete", "reload"])
        #expect(changes.map { $0["by"] as? String } == ["ops", "ops", "ops", "SIGHUP"])
        #expect(changes[1]["old_url"] as? String == server.url("b") && changes[1]["new_url"] as? String == server.url("a"))
        #expect(changes[2]["old_url"] as? String == server.url("a") && changes[2]["new_url"] == nil)
        #expect(changes.prefix(3).allSatisfy { $0["channel"] as? String == "b" })
    }

    /// What an API channel may point at, and where the operator's credentials go: a test server
    /// on 127.0.0.2 stands for an outside host (allowed through `api_hosts`), and never receives
    /// the config's default headers, which the file's own channel's host does.
    @Test func apiChannelsAreHeldToHttpPublicHostsAndNeverGetTheOperatorsCredentials() throws {
        let inside = try LineupServer(["a": ServeTests.channel(seed: 1)])
        defer { inside.stop() }
        let outsideChannel = ServeTests.channel(seed: 2)
        let outside = try LocalHTTPServer(host: "127.0.0.2") { request in
            var inner = request
            inner.path = String(request.path.dropFirst(2))
            return outsideChannel.respond(to: inner)
        }
        defer { outside.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("lineup.yaml")
        try """
            api_hosts: ["127.0.0.2"]
            defaults: {headers: {X-Token: cdn-secret-1234, Cookie: session=cdn}}
            channels:
              - {name: a, url: "\(inside.url("a"))"}

            """.write(to: config, atomically: true, encoding: .utf8)
        let (process, out, err) = try Command.launch(["serve", config.path, "--listen", "127.0.0.1:0", "--max-channels", "2"],
                                                     environment: ["ID3METER_API_TOKENS": "ops write \(Self.write)\n"])
        defer { if process.isRunning { process.terminate() } }
        let api = try #require(ServeCommandTests.apiAddress(from: err).address)
        let bearer = "Bearer \(Self.write)"
        func put(_ name: String, _ body: String) throws -> (status: Int, body: String, headers: [String: String]) {
            try Self.request("PUT", "\(api)/channels/\(name)", authorization: bearer, body: body)
        }
        for (url, words) in [("file:///etc/passwd", "must be a URL of http, https"), ("udp://127.0.0.1:5000", "must be a URL of http, https"),
                             ("tcp://127.0.0.1:22", "must be a URL of http, https"),
                             ("http://127.0.0.1:\(inside.server.port)/admin?x=1", "a loopback address"),
                             ("http://10.1.2.3/live.m3u8", "a private address"), ("http://169.254.169.254/latest", "a link-local address")] {
            let refused = try put("x", #"{"name": "x", "url": "\#(url)"}"#)
            #expect(refused.status == 400 && refused.body.contains(words), "\(url): \(refused.body)")
        }
        let hostHeader = try put("x", #"{"name": "x", "url": "\#(outside.url("b/master.m3u8"))", "headers": {"Host": "internal"}}"#)
        #expect(hostHeader.status == 400 && hostHeader.body.contains("may not set the Host header"), "\(hostHeader.body)")
        #expect(try put("b", #"{"name": "b", "url": "\#(outside.url("b/master.m3u8"))"}"#).status == 201)
        let third = try put("c", #"{"name": "c", "url": "\#(outside.url("c/master.m3u8"))"}"#)
        #expect(third.status == 429 && third.body.contains("--max-channels"), "\(third)")

        // A SIGHUP reads the file again: the API's channel stays, and says where it came from.
        kill(process.processIdentifier, SIGHUP)
        let reader = RecordReader(out)
        reader.read { $0["type"] as? String == "config_change" && $0["action"] as? String == "reload" }
        reader.read { $0["type"] as? String == "send_id3" && $0["channel"] as? String == "b" }
        let listed = try Self.request("GET", "\(api)/channels", authorization: bearer)
        let view = try #require(try JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [String: Any])
        let sources = (view["channels"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "") \($0["source"] ?? "")" }
        #expect(sources == ["a file", "b api"], "\(listed.body)")
        kill(process.processIdentifier, SIGTERM)
        reader.read { _ in false }
        process.waitUntilExit()

        #expect(!outside.requests.isEmpty)
        #expect(outside.requests.allSatisfy { $0.headers["x-token"] == nil && $0.headers["cookie"] == nil },
                "the outside host never got the operator's credentials")
        #expect(inside.server.requests.contains { $0.headers["x-token"] == "cdn-secret-1234" }, "the file's own host does")
    }
}
