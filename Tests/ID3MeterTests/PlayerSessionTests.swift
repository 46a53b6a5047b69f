import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// What a player keeps for a session and how it tells what it was given, against a CDN on
/// loopback that behaves as production ones do around the fMP4 sample (whose tags its writer
/// listed): a packager's URLs, a token cookie, `EXT-X-DEFINE` tokens, compressed playlists.
/// Each is scanned, metered and served, every tag once.
@Suite("Player sessions: packager URLs, cookies, variables, compression", .serialized, .timeLimit(.minutes(3)))
struct PlayerSessionTests {
    static let sample = Samples.folder.appendingPathComponent("fmp4")

    static func planted() throws -> [Command.Send] {
        try Samples.expected("fmp4/expected.jsonl").filter(\.nielsen).map { Command.Send(pts: $0.pts, payload: $0.owner) }
    }

    static func sends(_ events: [MediaEvent]) -> [Command.Send] {
        events.tags.compactMap { timed in timed.nielsenTags.first.map { Command.Send(pts: timed.pts, payload: $0.payload) } }
    }

    /// gzip's own bytes (the independent writer), as a CDN compresses.
    static func gzipped(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-6"]
        let (input, output) = (Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        Command.watch(process)
        let writer = Thread { input.fileHandleForWriting.write(Data(bytes)); try? input.fileHandleForWriting.close() }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    /// The sample's media playlist with each URI rewritten.
    static func mediaPlaylist(_ rewrite: (String) -> String, header: String = "") throws -> String {
        let text = try String(contentsOf: sample.appendingPathComponent("index.m3u8"), encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            if line.hasPrefix("#EXT-X-MAP:URI=\"init.mp4\"") { return "#EXT-X-MAP:URI=\"\(rewrite("init.mp4"))\"" }
            if line.hasPrefix("#EXTM3U") { return "#EXTM3U" + header }
            return line.hasPrefix("#") || line.isEmpty ? String(line) : rewrite(String(line))
        }.joined(separator: "\n")
    }

    static func file(_ name: String) -> [UInt8] {
        (try? Data(contentsOf: sample.appendingPathComponent(name))).map { [UInt8]($0) } ?? []
    }

    static let playlistType = "application/vnd.apple.mpegurl"

    /// The CDN: `pkg/` a packager's URLs, `live/` a token cookie per viewer, `define/` a query
    /// token, `gzip/` compressing everything it sends. It records what went wrong.
    final class CDN: Sendable {
        let server: LocalHTTPServer
        let problems = Collected<String>()

        init() throws {
            let problems = self.problems
            server = try LocalHTTPServer { request in
                let parts = request.path.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { return .notFound }
                do {
                    return try CDN.answer(parts[0], parts[1], request, problem: problems.append)
                } catch {
                    return LocalHTTPServer.Response(status: 500)
                }
            }
        }

        func url(_ path: String) -> String { server.url(path) }

        static let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=200000,FRAME-RATE=29.970\n"

        static func answer(_ area: String, _ rest: String, _ request: LocalHTTPServer.Request,
                           problem: @escaping (String) -> Void) throws -> LocalHTTPServer.Response {
            switch area {
            case "pkg":
                // Unified Streaming's live URL: the master is a name that is only an extension,
                // the variant a name with path parameters.
                switch rest {
                case "channel1.isml/.m3u8":
                    return .init(body: Array((master + "index.m3u8;session=abc\n").utf8), contentType: playlistType)
                case "channel1.isml/index.m3u8;session=abc":
                    return .init(body: Array(try mediaPlaylist { $0 }.utf8), contentType: playlistType)
                default:
                    return .init(body: file(String(rest.dropFirst("channel1.isml/".count))))
                }
            case "live":
                // Akamai's token cookie: handed out with the master, for /live, one per viewer.
                let viewer = request.query["viewer"] ?? ""
                let token = "hdntl=exp=1999999999~acl=%2flive%2f*~hmac=\(viewer)0f3c"
                if rest == "master.m3u8" {
                    return .init(body: Array((master + "index.m3u8?viewer=\(viewer)\n").utf8), contentType: playlistType,
                                 headers: ["Set-Cookie": "\(token); Path=/live; HttpOnly\nelsewhere=1; Path=/other\nwide=1; Domain=example.com"])
                }
                let cookie = request.headers["cookie"] ?? ""
                guard cookie == token else {
                    problem("\(request.path)?viewer=\(viewer) came with Cookie '\(cookie)'")
                    return .init(status: 403)
                }
                if rest == "index.m3u8" {
                    return .init(body: Array(try mediaPlaylist { "\($0)?viewer=\(viewer)" }.utf8), contentType: playlistType)
                }
                return .init(body: file(rest))
            case "define":
                // Apple's EXT-X-DEFINE token: taken from the master's URL, imported by the media playlist.
                guard request.query["token"] == "s3cr3t" else {
                    problem("\(request.path) without the token: \(request.query)")
                    return .init(status: 403)
                }
                switch rest {
                case "master.m3u8":
                    let text = "#EXTM3U\n#EXT-X-DEFINE:QUERYPARAM=\"token\"\n#EXT-X-STREAM-INF:BANDWIDTH=200000\nindex.m3u8?token={$token}\n"
                    return .init(body: Array(text.utf8), contentType: playlistType)
                case "index.m3u8":
                    let header = "\n#EXT-X-DEFINE:IMPORT=\"token\"\n#EXT-X-DEFINE:NAME=\"path\",VALUE=\"\""
                    return .init(body: Array(try mediaPlaylist({ "{$path}\($0)?token={$token}" }, header: header).utf8), contentType: playlistType)
                default:
                    return .init(body: file(rest))
                }
            case "gzip":
                // Compresses whatever it sends, asked or not.
                let body = rest.hasSuffix(".m3u8") ? Array(try mediaPlaylist { $0 }.utf8) : file(rest)
                let asked = request.headers["accept-encoding"]?.contains("gzip") == true
                if rest.hasSuffix(".m3u8") != asked { problem("\(request.path) asked with Accept-Encoding '\(request.headers["accept-encoding"] ?? "")'") }
                return .init(body: try gzipped(body), contentType: rest.hasSuffix(".m3u8") ? playlistType : "video/mp4",
                             headers: ["Content-Encoding": "gzip"])
            default:
                return .notFound
            }
        }
    }

    static let entries = ["pkg/channel1.isml/.m3u8", "live/master.m3u8?viewer=a", "define/master.m3u8?token=s3cr3t", "gzip/index.m3u8"]

    @Test(arguments: entries)
    func scannedAndMeteredAsAPlayerPlaysIt(_ entry: String) async throws {
        let cdn = try CDN()
        defer { cdn.server.stop() }
        let events = await Samples.scan(cdn.url(entry))
        #expect(events.failures.isEmpty, "\(events.failures)")
        #expect(Self.sends(events) == (try Self.planted()), "scan \(entry)")
        let run = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", cdn.url(entry)]) }
        #expect(run.status == 0, "\(entry): \(run.stderr)")
        #expect(run.sends == (try Self.planted()), "meter \(entry)")
        #expect(cdn.problems.all == [])
    }

    /// Four channels of the CDN in one line-up, two of them viewers of the cookie CDN: each
    /// channel's requests carry its own cookie, never the other's.
    @Test func servedEachChannelWithItsOwnSession() async throws {
        let cdn = try CDN()
        defer { cdn.server.stop() }
        var channels = Dictionary(uniqueKeysWithValues: Self.entries.enumerated().map { ("c\($0.offset)", cdn.url($0.element)) })
        channels["c4"] = cdn.url("live/master.m3u8?viewer=b")
        let running = try await RunningLineup(channels: channels)
        let (statuses, ended) = try await running.statuses { $0.allSatisfy { $0.state == .ended } }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        for name in channels.keys.sorted() {
            #expect(running.deliveries(name).map { Command.Send(pts: $0.pts, payload: $0.payload) } == (try Self.planted()),
                    "serve \(name)")
        }
        #expect(cdn.problems.all == [])
        let viewers = cdn.server.requests.filter { $0.path.hasPrefix("live/") }.compactMap { $0.query["viewer"] }
        #expect(Set(viewers) == ["a", "b"])
    }

    /// An MPD sent gzip-compressed, under a name that does not say it is one: asked compressed,
    /// told by its Content-Type, every planted tag read.
    @Test func aCompressedMPDUnderAnotherNameIsRead() async throws {
        let folder = Samples.folder.appendingPathComponent("dash/timeline")
        let asked = Collected<String>()
        let server = try LocalHTTPServer { request in
            if request.path == "channel/manifest" {
                asked.append(request.headers["accept-encoding"] ?? "")
                let mpd = (try? Data(contentsOf: folder.appendingPathComponent("manifest.mpd"))).map { [UInt8]($0) } ?? []
                return (try? PlayerSessionTests.gzipped(mpd)).map {
                    .init(body: $0, contentType: "application/dash+xml", headers: ["Content-Encoding": "gzip"])
                } ?? .init(status: 500)
            }
            return .file(String(request.path.dropFirst("channel/".count)), in: folder)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("channel/manifest"))
        #expect(events.failures.isEmpty, "\(events.failures)")
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("timeline")))
        #expect(asked.all.last == "gzip, deflate", "\(asked.all)")
    }

    /// Without a jar (a fetcher outside any session), the cookie CDN refuses: the test can fail.
    @Test func theCookieCDNRefusesAPlayerThatKeepsNoCookie() async throws {
        let cdn = try CDN()
        defer { cdn.server.stop() }
        let walk = PlaylistWalk(input: cdn.url("live/master.m3u8?viewer=a"), loader: PlaylistLoader(fetcher: Fetcher(retry: .none)),
                                rule: .both, reloads: false, clock: ContinuousClock())
        var events: [MediaEvent] = []
        await walk.run { events.append($0) }
        #expect(events.tags.isEmpty)
        #expect(cdn.problems.all.first?.contains("came with Cookie ''") == true)
    }
}

/// The parts a session is made of, on their own.
@Suite("Player sessions: rules")
struct PlayerSessionRuleTests {
    @Test func theNameIsAHintAndWhatTheServerSaysDecides() {
        #expect(InputKind.hinted(by: "https://h/channel1.isml/.m3u8") == .hlsPlaylist)
        #expect(InputKind.hinted(by: "https://h/channel1.isml/.mpd") == .mpd)
        #expect(InputKind.hinted(by: "https://h/master.m3u8;session=abc") == .hlsPlaylist)
        #expect(InputKind.hinted(by: "https://h/a.mpd?x=1#f") == .mpd)
        #expect(InputKind.hinted(by: "https://h/live/manifest") == nil)
        #expect(InputKind.hinted(by: "https://h/x.ts") == .media)
        #expect(InputKind.hinted(by: "/tmp/odd;name.m3u8") == .hlsPlaylist)
        #expect(InputKind.told(contentType: "text/plain", prefix: Array("\u{FEFF}\n#EXTM3U\n".utf8)) == .hlsPlaylist)
        #expect(InputKind.told(contentType: "Application/VND.Apple.MPEGURL; charset=utf-8", prefix: []) == .hlsPlaylist)
        #expect(InputKind.told(contentType: nil, prefix: Array("<?xml version=\"1.0\"?>\n<!-- made by x -->\n<dash:MPD xmlns:dash=\"urn\">".utf8)) == .mpd)
        #expect(InputKind.told(contentType: "application/dash+xml", prefix: Array("junk".utf8)) == .mpd)
        #expect(InputKind.told(contentType: "text/html", prefix: Array("<html><body>".utf8)) == nil)
        #expect(InputKind.told(contentType: nil, prefix: [0x47] + [UInt8](repeating: 0, count: 187) + [0x47] + [UInt8](repeating: 0, count: 187)) == .media)
    }

    /// A playlist named without an extension, a local file or over HTTP, is read as one; a
    /// folder scan takes it and not the segments it names.
    @Test func aPlaylistWithoutAnExtensionIsReadAsOne() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["init.mp4", "seg0.m4s", "seg1.m4s", "seg2.m4s"] {
            try FileManager.default.copyItem(at: PlayerSessionTests.sample.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(at: PlayerSessionTests.sample.appendingPathComponent("index.m3u8"),
                                         to: folder.appendingPathComponent("playlist"))
        try Data("not a stream".utf8).write(to: folder.appendingPathComponent("notes"))
        let events = await Samples.scan(folder.appendingPathComponent("playlist").path)
        #expect(PlayerSessionTests.sends(events) == (try PlayerSessionTests.planted()))
        let expanded = await InputExpansion.expand([folder.path], scanner: TagScanner())
        #expect(expanded.inputs == [folder.appendingPathComponent("playlist").standardizedFileURL.path])
    }

    @Test func cookiesApplyWhereRFC6265SaysAndNowhereElse() throws {
        let jar = CookieJar()
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let master = try #require(URL(string: "https://cdn.example.com/live/ch1/master.m3u8"))
        jar.store(["token=abc; Path=/live; Secure", "session=1", "wide=2; Domain=.example.com; Path=/", "tld=3; Domain=com",
                   "other=4; Domain=other.org", "old=5; Expires=Wed, 21 Oct 2015 07:28:00 GMT", "capped=6; Max-Age=99999999999; path=/"],
                  from: master, now: now)
        #expect(jar.count == 4, "tld, other and old are not kept")
        func header(_ url: String, _ time: Date = now) -> String? { jar.header(for: URL(string: url)!, now: time) }
        #expect(header("https://cdn.example.com/live/ch1/index.m3u8") == "session=1; token=abc; wide=2; capped=6", "longer paths first")
        #expect(header("https://cdn.example.com/live") == "token=abc; wide=2; capped=6", "session's default path is /live/ch1")
        #expect(header("http://cdn.example.com/live/x.ts") == "wide=2; capped=6", "Secure only over https")
        #expect(header("https://cdn.example.com/liveX/a") == "wide=2; capped=6")
        #expect(header("https://a.example.com/live/a") == "wide=2", "a Domain cookie goes to subdomains, a host-only one does not")
        #expect(header("https://example.org/") == nil)
        #expect(header("https://cdn.example.com/live/a", now.addingTimeInterval(401 * 86_400)) == "token=abc; wide=2", "400 days at most")
        jar.store(["token=gone; Path=/live; Max-Age=0"], from: master, now: now)
        #expect(header("https://cdn.example.com/live/x") == "wide=2; capped=6")
        jar.store((0..<400).map { "n\($0)=v" }, from: master, now: now)
        #expect(jar.count <= CookieJar.maximumCookies)
        jar.store([String(repeating: "x", count: 5_000) + "=1"], from: master, now: now)
        #expect(header("https://cdn.example.com/live/ch1/a")?.contains("xxxx") == false)
        #expect(CookieDate.parse("Sun, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func variablesAreSubstitutedAsRFC8216bisSays() throws {
        let master = """
            #EXTM3U
            #EXT-X-DEFINE:QUERYPARAM="token"
            #EXT-X-DEFINE:NAME="host",VALUE="https://cdn.example"
            #EXT-X-STREAM-INF:BANDWIDTH=1
            {$host}/v.m3u8?t={$token}
            """
        guard case .master(let parsed) = try PlaylistParser.parse(master, location: "https://a/m.m3u8?token=a%20b&x=1") else {
            Issue.record("not a master"); return
        }
        #expect(parsed.variants.first?.uri == "https://cdn.example/v.m3u8?t=a b")
        #expect(parsed.variables == ["token": "a b", "host": "https://cdn.example"])
        let media = """
            #EXTM3U
            #EXT-X-TARGETDURATION:6
            #EXT-X-DEFINE:IMPORT="host"
            #EXT-X-MAP:URI="{$host}/init.mp4"
            #EXTINF:6,
            {$host}/s.m4s
            """
        guard case .media(let playlist) = try PlaylistParser.parse(media, location: "https://b/v.m3u8", imports: parsed.variables) else {
            Issue.record("not media"); return
        }
        #expect(playlist.segments.map(\.uri) == ["https://cdn.example/s.m4s"])
        #expect(playlist.segments.first?.mapURI == "https://cdn.example/init.mp4")
        func reason(_ text: String, imports: [String: String] = [:]) -> PlaylistError? {
            do { _ = try PlaylistParser.parse(text, location: "https://b/v.m3u8", imports: imports); return nil } catch { return error }
        }
        #expect(reason("#EXTM3U\n#EXTINF:6,\n{$nope}.ts") == PlaylistError(.undefinedVariable("nope"), line: 3))
        #expect(reason("#EXTM3U\n#EXT-X-DEFINE:IMPORT=\"host\"") == PlaylistError(.undefinedImport("host"), line: 2))
        #expect(reason("#EXTM3U\n#EXT-X-DEFINE:QUERYPARAM=\"t\"") == PlaylistError(.missingQueryParameter("t"), line: 2))
        #expect(reason("#EXTM3U\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"1\"\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"2\"")?.reason
            == .badDefine("'a' defined twice"))
        // A megabyte value referenced thousands of times stops at the bound, not at memory's end.
        let big = String(repeating: "x", count: 1 << 20)
        let bomb = "#EXTM3U\n#EXT-X-DEFINE:NAME=\"b\",VALUE=\"\(big)\"\n" + String(repeating: "#EXTINF:1,\n{$b}{$b}{$b}{$b}\n", count: 5)
        #expect(reason(bomb)?.reason == .variablesTooLarge(PlaylistVariables.maximumExpansion))
    }

    /// A playlist sent gzip-compressed is read; one that decodes past the playlist limit stops
    /// there (a bomb: 64 MB of zeros in 64 KB); a body that is not the gzip it claims fails in words.
    @Test func compressedBodiesAreDecodedWithinTheLimits() async throws {
        let playlist = Array(try PlayerSessionTests.mediaPlaylist { $0 }.utf8)
        let (small, bomb) = (try PlayerSessionTests.gzipped(playlist), try PlayerSessionTests.gzipped([UInt8](repeating: 0x20, count: 64 << 20)))
        #expect(bomb.count < 100 << 10)
        let server = try LocalHTTPServer { request in
            switch request.path {
            case "ok.m3u8": .init(body: small, headers: ["Content-Encoding": "gzip"])
            case "bomb.m3u8": .init(body: bomb, headers: ["Content-Encoding": "gzip"])
            case "broken.m3u8": .init(body: Array(small.prefix(20)) + [UInt8](repeating: 0xAB, count: 100), headers: ["Content-Encoding": "gzip"])
            case "brotli.m3u8": .init(body: playlist, headers: ["Content-Encoding": "br"])
            default: .notFound
            }
        }
        defer { server.stop() }
        let fetcher = Fetcher(retry: .none)
        #expect(try await fetcher.fetch(server.url("ok.m3u8"), as: .playlist) == playlist)
        for (name, expected) in [("bomb.m3u8", FetchError.tooLarge(.playlist, limit: 16 << 20, declared: nil)),
                                 ("broken.m3u8", .encoding(nil)), ("brotli.m3u8", .encoding("br"))] {
            do {
                _ = try await fetcher.fetch(server.url(name), as: .playlist)
                Issue.record("\(name) was read")
            } catch {
                #expect(error.error == expected, "\(name): \(error)")
            }
        }
        #expect(server.requests.allSatisfy { $0.headers["accept-encoding"] == "gzip, deflate" })
    }
}
