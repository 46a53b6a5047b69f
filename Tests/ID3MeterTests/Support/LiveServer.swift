import Foundation
import Synchronization
import SampleGenerator

/// One live stream as a server publishes it: its clock starts at its first request,
/// `preroll` seconds in, so a test sees the same stream however late a loaded machine gets
/// round to asking; the first media playlist served is kept, to tell where a meter joined.
final class LiveChannel: @unchecked Sendable {
    private let lock = NSLock()
    private var stream: LiveStream?
    private var firstPlaylist: String?
    fileprivate let preroll: Double
    fileprivate let make: @Sendable (Date) -> LiveStream

    init(preroll: Double, make: @escaping @Sendable (Date) -> LiveStream) {
        self.preroll = preroll
        self.make = make
    }

    /// The same stream, as a restarted server still has it.
    init(continuing previous: LiveChannel) {
        preroll = previous.preroll
        make = previous.make
        stream = previous.liveStream
        firstPlaylist = previous.joinedOn
    }

    func respond(to request: LocalHTTPServer.Request) -> LocalHTTPServer.Response {
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

    /// The owners of the tags of segments `first` up to the end, in order.
    func owners(from first: Int) -> [String] {
        guard let stream = liveStream, let count = stream.segmentCount else { return [] }
        return (first..<count).flatMap { stream.tags(inSegment: $0).map(\.owner) }
    }
}

/// A live HLS server of one stream, at `master.m3u8`.
final class LiveServer: @unchecked Sendable {
    let channel: LiveChannel
    private(set) var server: LocalHTTPServer!

    init(port: UInt16 = 0, preroll: Double, make: @escaping @Sendable (Date) -> LiveStream) throws {
        channel = LiveChannel(preroll: preroll, make: make)
        server = try LocalHTTPServer(port: port) { [channel] in channel.respond(to: $0) }
    }

    /// Takes over from `previous` on its port, with its stream: a restarted server.
    init(restarting previous: LiveServer) throws {
        channel = LiveChannel(continuing: previous.channel)
        server = try LocalHTTPServer(port: previous.server.port) { [channel] in channel.respond(to: $0) }
    }

    var liveStream: LiveStream? { channel.liveStream }
    var joinedOn: String? { channel.joinedOn }
    func joinSegment(back: Int) -> Int? { channel.joinSegment(back: back) }
    func url(_ path: String) -> String { server.url(path) }
    func stop() { server.stop() }
}

/// A line-up of live channels on one server, each under its name (`news/master.m3u8`); a name
/// with no channel answers 404, as a channel taken off a CDN does.
final class LineupServer: @unchecked Sendable {
    let channels: [String: LiveChannel]
    private let killed = KilledChannels()
    private(set) var server: LocalHTTPServer!

    /// `hostile` answers a channel's requests first, where it returns a response (a trickle, say).
    /// Two servers of the same channels on two `host`s are two CDNs of one line-up.
    init(_ channels: [String: LiveChannel], host: String = "127.0.0.1",
         hostile: @escaping @Sendable (_ channel: String, LocalHTTPServer.Request) -> LocalHTTPServer.Response? = { _, _ in nil }) throws {
        self.channels = channels
        server = try LocalHTTPServer(host: host) { [channels, killed] request in
            let parts = request.path.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, let channel = channels[parts[0]], !killed.contains(parts[0]) else {
                return .notFound
            }
            var inner = request
            inner.path = parts[1]
            return hostile(parts[0], inner) ?? channel.respond(to: inner)
        }
    }

    func url(_ channel: String) -> String { server.url("\(channel)/master.m3u8") }

    /// A line-up config of every channel, by name, written as `lineup.yaml` in `folder`.
    func writeConfig(in folder: URL) throws -> URL {
        let config = folder.appendingPathComponent("lineup.yaml")
        try (["channels:"] + channels.keys.sorted().map { "  - {name: \($0), url: \"\(url($0))\"}" }).joined(separator: "\n")
            .appending("\n").write(to: config, atomically: true, encoding: .utf8)
        return config
    }
    /// From now on the channel answers 404, playlist and segments alike, as one taken off a CDN.
    func kill(_ channel: String) { killed.insert(channel) }
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

/// The names a `LineupServer` no longer answers for.
private final class KilledChannels: Sendable {
    private let names = Mutex<Set<String>>([])
    func insert(_ name: String) { names.withLock { _ = $0.insert(name) } }
    func contains(_ name: String) -> Bool { names.withLock { $0.contains(name) } }
}
