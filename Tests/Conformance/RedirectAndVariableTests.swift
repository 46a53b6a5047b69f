import Foundation
import Testing
import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Where a playlist's or an MPD's relative references point after a redirect, and how
/// `EXT-X-DEFINE` values are read (docs/CONFORMANCE.md, "Redirects" and "EXT-X-DEFINE").
///
/// - shaka-player, test/dash/dash_parser_manifest_unit.js, "uses redirect URL for manifest
///   BaseURL and updates": an MPD answered from another URL than the one asked resolves its
///   relative URLs against the URL it was answered from.
/// - hls.js, src/loader/playlist-loader.ts: a playlist is parsed against its loader's response
///   URL (after redirects); tests/unit/loader/playlist-loader.ts and m3u8-parser's variable
///   tests: `QUERYPARAM` reads the playlist's own URL, and a `VALUE` may use a variable defined
///   before it.
@Suite("Conformance: redirects and EXT-X-DEFINE", .timeLimit(.minutes(1)))
struct RedirectAndVariableTests {
    /// An MPD asked at /entry/manifest.mpd and answered, after a 302, from /real/, where its
    /// segments are: every planted tag, read from /real/.
    @Test func anMPDsRelativeURLsAreOfTheURLItWasAnsweredFrom() async throws {
        let root = Samples.folder.appendingPathComponent("dash/timeline")
        let server = try LocalHTTPServer { request in
            if request.path == "entry/manifest.mpd" { return LocalHTTPServer.Response(status: 302, headers: ["Location": "/real/manifest.mpd"]) }
            guard request.path.hasPrefix("real/") else { return .notFound }
            return .file(String(request.path.dropFirst("real/".count)), in: root)
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("entry/manifest.mpd"))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("timeline")), "\(events.failures)")
        #expect(!server.requests.contains { $0.path.hasPrefix("entry/") && $0.path != "entry/manifest.mpd" }, "nothing asked of the first URL's folder")
    }

    /// A master playlist asked at /entry/ and answered, after a 302, from
    /// /real/master.m3u8?token=abc%2Fdef: its `QUERYPARAM` is that URL's (decoded), its
    /// variables build on one another, its media playlist resolves against /real/.
    @Test func aRedirectedMastersQueryAndNestedVariablesMakeTheVariantsURL() async throws {
        let root = Samples.folder.appendingPathComponent("fmp4")
        let master = """
            #EXTM3U
            #EXT-X-DEFINE:QUERYPARAM="token"
            #EXT-X-DEFINE:NAME="name",VALUE="index"
            #EXT-X-DEFINE:NAME="media",VALUE="{$name}.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=100000
            {$media}?token={$token}

            """
        let server = try LocalHTTPServer { request in
            switch request.path {
            case "entry/master.m3u8": LocalHTTPServer.Response(status: 302, headers: ["Location": "/real/master.m3u8?token=abc%2Fdef"])
            case "real/master.m3u8" where request.query["token"] != nil: LocalHTTPServer.Response(body: Array(master.utf8))
            case "real/index.m3u8" where request.query["token"] != nil, "real/init.mp4", "real/seg0.m4s", "real/seg1.m4s", "real/seg2.m4s":
                .file(String(request.path.dropFirst("real/".count)), in: root)
            default: .notFound
            }
        }
        defer { server.stop() }
        let events = await Samples.scan(server.url("entry/master.m3u8"))
        let expected = try String(contentsOf: root.appendingPathComponent("expected.jsonl"), encoding: .utf8)
            .split(separator: "\n").filter { $0.contains(#""nielsen":true"#) }.count
        #expect(events.tags.flatMap(\.nielsenTags).count == expected && expected > 0, "\(events.failures)")
        let asked = server.requests.first { $0.path == "real/index.m3u8" }
        #expect(asked?.query["token"].map { $0.removingPercentEncoding } == "abc/def", "\(String(describing: asked?.query))")
    }
}

/// dash.js refreshes a live MPD from its manifest's `url`, the URL it was answered from after
/// a redirect (src/streaming/ManifestLoader.js, ManifestUpdater.js); shaka-player puts the
/// redirect URL first among the MPD's URIs (test/dash/dash_parser_live_unit.js, "uses redirect
/// URL for manifest BaseURL and updates").
@Suite("Conformance: a live MPD behind a redirect", .timeLimit(.minutes(2)))
struct RedirectedLiveMPDTests {
    @Test func aLiveMPDIsRefreshedWhereItWasAnsweredFrom() async throws {
        let live = try LiveDASHServer(preroll: 3) { LiveDASHTests.stream($0, offset: 0, timeline: false, count: 8) }
        defer { live.stop() }
        let front = try LocalHTTPServer { request in
            if request.path == "entry/live.mpd" { return LocalHTTPServer.Response(status: 302, headers: ["Location": "/s/live.mpd"]) }
            guard request.path.hasPrefix("s/"), let stream = live.stream else { return .notFound }
            return stream.respond(to: LocalHTTPServer.Request(method: request.method, path: String(request.path.dropFirst(2)), query: request.query,
                                                              headers: request.headers))
        }
        defer { front.stop() }
        _ = try await offThePool { try Data(contentsOf: URL(string: live.url)!) }   // starts the stream's clock
        var events: [MediaEvent] = []
        for await event in TagSource(input: front.url("entry/live.mpd"), clock: ContinuousClock()).caught({ .failure($0) }) { events.append(event) }
        #expect(events.failures.isEmpty, "\(events.failures)")
        #expect(!events.tags.isEmpty)
        let paths = front.requests.map(\.path)
        #expect(paths.filter { $0 == "entry/live.mpd" }.count == 1, "asked once where it was first asked: \(paths.filter { $0.hasSuffix(".mpd") })")
        #expect(paths.filter { $0 == "s/live.mpd" }.count >= 2, "refreshed where it was answered from")
        #expect(!paths.contains { $0.hasPrefix("entry/") && $0 != "entry/live.mpd" }, "\(Set(paths))")
    }
}
