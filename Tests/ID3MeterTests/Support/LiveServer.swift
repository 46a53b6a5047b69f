import Foundation
import SampleGenerator

/// A live HLS server whose clock starts at its first request, `preroll` seconds in, so a test
/// sees the same stream however late a loaded machine gets round to asking.
final class LiveServer: @unchecked Sendable {
    private let lock = NSLock()
    private var stream: LiveStream?
    private var firstPlaylist: String?
    private let preroll: Double
    private let make: @Sendable (Date) -> LiveStream
    private(set) var server: LocalHTTPServer!

    init(port: UInt16 = 0, preroll: Double, make: @escaping @Sendable (Date) -> LiveStream) throws {
        self.preroll = preroll
        self.make = make
        server = try LocalHTTPServer(port: port) { [unowned self] in respond(to: $0) }
    }

    /// Takes over from `previous` on its port, with its stream: a restarted server.
    init(restarting previous: LiveServer) throws {
        preroll = previous.preroll
        make = previous.make
        stream = previous.liveStream
        firstPlaylist = previous.joinedOn
        server = try LocalHTTPServer(port: previous.server.port) { [unowned self] in respond(to: $0) }
    }

    private func respond(to request: LocalHTTPServer.Request) -> LocalHTTPServer.Response {
        let live = lock.withLock {
            if stream == nil { stream = make(Date().addingTimeInterval(-preroll)) }
            return stream!
        }
        let response = live.respond(to: request)
        if request.path == "live.m3u8" {
            lock.withLock { if firstPlaylist == nil { firstPlaylist = String(decoding: response.body, as: UTF8.self) } }
        }
        return response
    }

    var liveStream: LiveStream? { lock.withLock { stream } }
    /// The first media playlist served: what a meter joined on.
    var joinedOn: String? { lock.withLock { firstPlaylist } }

    /// The segment a meter joining `back` segments from the edge started at (the first one if
    /// the stream had already ended).
    func joinSegment(back: Int) -> Int? {
        guard let playlist = joinedOn else { return nil }
        let listed = playlist.split(separator: "\n").filter { $0.hasPrefix("seg") }.compactMap { Int($0.dropFirst(3).dropLast(3)) }
        if playlist.contains("#EXT-X-ENDLIST") { return listed.first }
        return listed.count >= back ? listed[listed.count - back] : listed.first
    }

    func url(_ path: String) -> String { server.url(path) }
    func stop() { server.stop() }
}

/// A server whose media playlist (`live.m3u8`) follows a script, by the number of the load (from
/// 1) rather than by the clock; segments come from `stream`, all published.
enum ScriptedPlaylistServer {
    static func start(stream: LiveStream, playlist: @escaping @Sendable (Int) -> String) throws -> LocalHTTPServer {
        let loads = Counter()
        return try LocalHTTPServer { request in
            guard request.path == "live.m3u8" else { return stream.respond(to: request, at: .distantFuture) }
            return LocalHTTPServer.Response(body: Array(playlist(loads.next()).utf8))
        }
    }

    /// A media playlist of 1 s segments `segN.ts`.
    static func playlist(_ sequences: ClosedRange<Int>, ended: Bool) -> String {
        let lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:\(sequences.lowerBound)"]
            + sequences.flatMap { ["#EXTINF:1,", "seg\($0).ts"] } + (ended ? ["#EXT-X-ENDLIST"] : [])
        return lines.joined(separator: "\n") + "\n"
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
    }
}
