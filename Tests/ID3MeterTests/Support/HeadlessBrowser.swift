import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's chromium, headless, driven over the DevTools protocol on a pipe
/// (`--remote-debugging-pipe`: it reads commands on fd 3 and writes replies and events on fd 4,
/// each message JSON ended by a NUL). Blocking: run it off the cooperative pool.
final class HeadlessBrowser: @unchecked Sendable {

    /// What a page did that a test checks: errors it logged or threw, and every URL it requested.
    struct PageLog {
        var errors: [String] = []
        var requests: [String] = []
    }

    private let pid: pid_t
    private let commands: FileHandle
    private let replies: FileHandle
    private let profile: URL
    private let condition = NSCondition()
    private var answers: [Int: [String: Any]] = [:]
    private var events: [(session: String?, method: String, params: [String: Any])] = []
    private var nextID = 0
    private var closed = false

    static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    init() throws {
        guard let executable = Self.executable else { throw TestFailure("chromium not found: `make test` installs it (apt-get install chromium)") }
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("id3-meter-chromium-\(UUID().uuidString)")
        let toBrowser = Pipe(), fromBrowser = Pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toBrowser.fileHandleForReading.fileDescriptor, 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser.fileHandleForWriting.fileDescriptor, 4)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--remote-debugging-pipe",
                         "--user-data-dir=\(profile.path)", "--no-first-run", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "about:blank"]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // A process group of its own: closing kills its renderers and helpers with it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw TestFailure("cannot start chromium: \(String(cString: strerror(status)))") }
        pid = child
        commands = toBrowser.fileHandleForWriting
        replies = fromBrowser.fileHandleForReading
        // The child has its own copies: with ours closed, its exit ends our reads.
        try toBrowser.fileHandleForReading.close()
        try fromBrowser.fileHandleForWriting.close()
        Thread { [self] in read() }.start()
    }

    deinit { close() }

    /// Ends the browser and removes its profile.
    func close() {
        condition.lock()
        let wasClosed = closed
        closed = true
        condition.unlock()
        guard !wasClosed else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(at: profile)
    }

    private func read() {
        var buffer = Data()
        while case let chunk = replies.availableData, !chunk.isEmpty {
            buffer += chunk
            while let end = buffer.firstIndex(of: 0) {
                let message = buffer[buffer.startIndex..<end]
                buffer = Data(buffer[(end + 1)...])
                guard let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any] else { continue }
                condition.lock()
                if let id = object["id"] as? Int {
                    answers[id] = object
                } else if let method = object["method"] as? String {
                    events.append((object["sessionId"] as? String, method, object["params"] as? [String: Any] ?? [:]))
                }
                condition.broadcast()
                condition.unlock()
            }
        }
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Sends a command and waits (at most `timeout` seconds) for its result.
    @discardableResult
    func send(_ method: String, _ params: [String: Any] = [:], session: String? = nil, timeout: Double = 20) throws -> [String: Any] {
        condition.lock()
        nextID += 1
        let id = nextID
        condition.unlock()
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        try commands.write(contentsOf: JSONSerialization.data(withJSONObject: message) + [0])
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while answers[id] == nil, !closed, condition.wait(until: deadline) {}
        guard let answer = answers.removeValue(forKey: id) else {
            throw TestFailure("\(method): no answer from chromium within \(timeout) s")
        }
        if let error = answer["error"] { throw TestFailure("\(method): \(error)") }
        return answer["result"] as? [String: Any] ?? [:]
    }

    /// Waits until an event `method` of `session` has come, at most `timeout` seconds.
    func wait(for method: String, session: String, timeout: Double = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !events.contains(where: { $0.session == session && $0.method == method }) {
            guard !closed, condition.wait(until: deadline) else { throw TestFailure("no \(method) within \(timeout) s") }
        }
    }

    /// Opens `url` in a new tab of `width` x `height` and waits for its load event; the tab's session.
    func open(_ url: String, width: Int = 1280, height: Int = 900) throws -> String {
        let target = try send("Target.createTarget", ["url": "about:blank"])["targetId"] as? String ?? ""
        let session = try send("Target.attachToTarget", ["targetId": target, "flatten": true])["sessionId"] as? String ?? ""
        for domain in ["Page", "Runtime", "Network", "Log"] { try send("\(domain).enable", session: session) }
        try send("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false],
                 session: session)
        try send("Page.navigate", ["url": url], session: session)
        try wait(for: "Page.loadEventFired", session: session)
        return session
    }

    /// The value of a JavaScript expression in the page (a promise is awaited); JSON-like.
    func evaluate(_ expression: String, session: String) throws -> Any? {
        let result = try send("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true],
                              session: session)
        if let exception = result["exceptionDetails"] { throw TestFailure("\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Evaluates `expression` every 100 ms until it is true, at most `timeout` seconds.
    func waitUntil(_ expression: String, session: String, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try evaluate(expression, session: session) as? Bool != true {
            guard Date() < deadline else { throw TestFailure("still not true after \(timeout) s: \(expression)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// The page as a PNG, its whole height at `width` pixels.
    func screenshot(session: String, width: Int) throws -> Data {
        let height = try evaluate("document.documentElement.scrollHeight", session: session) as? Int ?? 900
        try send("Emulation.setDeviceMetricsOverride", ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false],
                 session: session)
        let result = try send("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true], session: session)
        return Data(base64Encoded: result["data"] as? String ?? "") ?? Data()
    }

    /// The errors the page logged or threw, and the URLs it requested, so far.
    func log(session: String) -> PageLog {
        condition.lock()
        defer { condition.unlock() }
        var log = PageLog()
        for event in events where event.session == session {
            switch event.method {
            case "Runtime.exceptionThrown":
                log.errors.append("\((event.params["exceptionDetails"] as? [String: Any])?["exception"] ?? event.params)")
            case "Runtime.consoleAPICalled" where ["error", "assert"].contains(event.params["type"] as? String):
                log.errors.append("console: \(event.params["args"] ?? "")")
            case "Log.entryAdded":
                let entry = event.params["entry"] as? [String: Any] ?? [:]
                if entry["level"] as? String == "error" { log.errors.append("\(entry["text"] ?? entry)") }
            case "Network.requestWillBeSent":
                if let url = (event.params["request"] as? [String: Any])?["url"] as? String { log.requests.append(url) }
            default:
                break
            }
        }
        return log
    }
}
