import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// A DASH channel on two CDNs (127.0.0.1 and 127.0.0.2), the MPD naming both: several `BaseURL`s
/// (DVB-DASH priorities), or the Representation listed again per CDN with the same id. The first
/// CDN dies, from the start or mid-stream, and comes back; every tag the samples' writer planted
/// is delivered once, and each switch is said.
@Suite("DASH copies on several CDNs", .serialized, .timeLimit(.minutes(3)))
struct DASHCopyTests {
    /// A CDN serving `samples/dash` (or `root`), whose media requests fail while `failing` says so
    /// of the request's number among the media requests it had (from 1): a 503, or with `cutting`
    /// that part of the body under a Content-Length of the whole, then the connection closed.
    final class CDN: @unchecked Sendable {
        private(set) var server: LocalHTTPServer!
        private let lock = NSLock()
        private var asked = 0, refused = 0

        init(host: String, root: URL = Samples.folder.appendingPathComponent("dash"), cutting: Double? = nil,
             failing: @escaping @Sendable (Int) -> Bool = { _ in false }) throws {
            server = try LocalHTTPServer(host: host) { [unowned self] request in
                guard [".m4s", ".mp4", ".ts"].contains(where: request.path.hasSuffix) else { return .file(request.path, in: root) }
                let refuse = lock.withLock {
                    asked += 1
                    if failing(asked) { refused += 1 }
                    return failing(asked)
                }
                guard refuse else { return .file(request.path, in: root) }
                guard let cutting, let whole = try? [UInt8](Data(contentsOf: root.appendingPathComponent(request.path))) else {
                    return LocalHTTPServer.Response(status: 503)
                }
                return LocalHTTPServer.Response(body: Array(whole.prefix(Int(Double(whole.count) * cutting))), length: .claimed(whole.count))
            }
        }

        var counts: (asked: Int, refused: Int) { lock.withLock { (asked, refused) } }
        func url(_ path: String) -> String { server.url(path) }
    }

    /// The sample's MPD with `edit` applied, served by an origin of its own.
    static func origin(_ sample: String, _ edit: (String) -> String) throws -> LocalHTTPServer {
        let text = edit(try String(contentsOf: Samples.folder.appendingPathComponent("dash/\(sample)/manifest.mpd"), encoding: .utf8))
        return try LocalHTTPServer { _ in LocalHTTPServer.Response(body: Array(text.utf8), contentType: "application/dash+xml") }
    }

    static func switches(_ events: [MediaEvent]) -> [(from: String, to: String, onBackup: Bool)] {
        events.warnings.compactMap { warning in
            if case .switchedPath(let from, let to, let onBackup, _) = warning.kind { (from, to, onBackup) } else { nil }
        }
    }

    /// Two `BaseURL`s at the MPD's level, the first CDN by priority dying after two segments: the
    /// rest is read from the second (retries of the first exhausted first), nothing lost or doubled.
    @Test func aCDNDyingMidStreamIsReadFromTheNextBaseURL() async throws {
        let first = try CDN(host: "127.0.0.1") { $0 >= 3 }
        let second = try CDN(host: "127.0.0.2")
        defer { first.server.stop(); second.server.stop() }
        // Listed second but preferred: DVB-DASH's lower priority goes first.
        let origin = try Self.origin("timeline") { text in
            text.replacingOccurrences(of: "<Period ", with: """
                <BaseURL dvb:priority="2" serviceLocation="b">\(second.url("timeline/"))</BaseURL>\
                <BaseURL dvb:priority="1" serviceLocation="a">\(first.url("timeline/"))</BaseURL><Period 
                """).replacingOccurrences(of: "<MPD ", with: #"<MPD xmlns:dvb="urn:dvb:dash:dash-extensions:2014-1" "#)
        }
        defer { origin.stop() }
        let events = await Samples.scan(origin.url("manifest.mpd"), fetcher: Fetcher(retry: .none))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("timeline")))
        #expect(events.failures.isEmpty, "\(events.failures)")
        let switched = Self.switches(events)
        #expect(switched.count == 1 && switched.first?.from == first.url("timeline/") && switched.first?.to == second.url("timeline/")
            && switched.first?.onBackup == true, "\(switched)")
        #expect(first.counts == (3, 1), "the first CDN is left after its first refusal: \(first.counts)")

        // The meter, a user's way: the same tags, once, and a warning record of the switch.
        let run = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", origin.url("manifest.mpd")]) }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.sends == (try DASHSampleTests.planted("timeline")).map { Command.Send(pts: $0.pts, payload: $0.owner) })
        #expect(run.stdout.contains(#""type":"warning""#) && run.stdout.contains("127.0.0.2"), "\(run.stdout.suffix(2_000))")

        // serve: the switch is a record, `on_backup` and the path-switch counter, as for HLS.
        let running = try await RunningLineup(channels: ["d": origin.url("manifest.mpd")])
        let (statuses, ended) = try await running.statuses { $0.first?.state == .ended }
        let metrics = running.metrics
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        #expect(running.deliveries("d").map { Command.Send(pts: $0.pts, payload: $0.payload) }
            == (try DASHSampleTests.planted("timeline")).map { Command.Send(pts: $0.pts, payload: $0.owner) })
        let said = running.records("d").warnings.filter { $0.contains("redundant copy at") }
        #expect(said.count == 1 && said.first?.contains(second.url("timeline/")) == true, "\(said)")
        #expect(running.alerts("d").contains { $0.name == "on_backup" && $0.active })
        #expect(metrics[#"id3meter_path_switches_total{channel="d"}"#] == 1)
    }

    /// The first CDN cuts a segment off halfway, after its emsg boxes: the tags read from the
    /// half are delivered, the segment is read again from the second CDN, and its tags are not
    /// delivered twice.
    @Test func aSegmentCutHalfwayIsReadFromTheCopyWithoutATagTwice() async throws {
        let first = try CDN(host: "127.0.0.1", cutting: 0.5) { $0 == 2 }
        let second = try CDN(host: "127.0.0.2")
        defer { first.server.stop(); second.server.stop() }
        let origin = try Self.origin("timeline") { text in
            text.replacingOccurrences(of: "<Period ", with: "<BaseURL>\(first.url("timeline/"))</BaseURL><BaseURL>\(second.url("timeline/"))</BaseURL><Period ")
        }
        defer { origin.stop() }
        let events = await Samples.scan(origin.url("manifest.mpd"), fetcher: Fetcher(retry: .none))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("timeline")))
        #expect(Self.switches(events).count == 1 && first.counts.refused == 1, "\(Self.switches(events))")
        // The cut segment was asked of both.
        let cut = try #require(first.server.requests.filter { $0.path.hasSuffix(".m4s") }.dropFirst().first?.path)
        #expect(second.server.requests.contains { $0.path == cut }, "\(cut)")
    }

    /// MPEG-TS segments in DASH, the first cut off by the first CDN after its tag: that tag is
    /// delivered from the half, and the segment read again from the second CDN does not deliver
    /// it again (TS tags carry no event id: the tags an attempt delivered are matched by PTS and
    /// bytes). Every tag the HLS sample's writer planted, once.
    @Test func aTransportStreamSegmentCutAfterItsTagIsNotDeliveredTwice() async throws {
        let root = Samples.folder.appendingPathComponent("hls/low")
        let first = try CDN(host: "127.0.0.1", root: root, cutting: 0.75) { $0 == 1 }
        let second = try CDN(host: "127.0.0.2", root: root)
        defer { first.server.stop(); second.server.stop() }
        // The cut keeps the first segment's tag: the failed attempt has one to deliver.
        let seg0 = [UInt8](try Data(contentsOf: root.appendingPathComponent("seg0.ts")))
        var extractor = MediaExtractor(origin: TagOrigin(source: "seg0.ts"))
        var inCut = 0
        extractor.feed(Array(seg0.prefix(Int(Double(seg0.count) * 0.75)))) { if case .tag(let tag) = $0, !tag.nielsenTags.isEmpty { inCut += 1 } }
        #expect(inCut == 1)
        let segments = (0..<6).map { #"<SegmentURL media="seg\#($0).ts"/>"# }.joined()
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT36.036S" profiles="urn:mpeg:dash:profile:mp2t-simple:2011">\
            <BaseURL>\(first.url(""))</BaseURL><BaseURL>\(second.url(""))</BaseURL><Period start="PT0S">\
            <AdaptationSet mimeType="video/mp2t" contentType="video"><Representation id="low" bandwidth="150000">\
            <SegmentList duration="6006" timescale="1000">\(segments)</SegmentList></Representation></AdaptationSet></Period></MPD>
            """
        let origin = try LocalHTTPServer { _ in LocalHTTPServer.Response(body: Array(mpd.utf8), contentType: "application/dash+xml") }
        defer { origin.stop() }
        let events = await Samples.scan(origin.url("manifest.mpd"), fetcher: Fetcher(retry: .none))
        let planted = try Samples.expected("hls/expected.jsonl").filter(\.nielsen)
        #expect(events.tags.filter { !$0.nielsenTags.isEmpty }.map { Command.Send(pts: $0.pts ?? -1, payload: $0.nielsenTags[0].payload) }
            == planted.map(Command.Send.init))
        #expect(Self.switches(events).count == 1 && first.counts.refused == 1, "\(Self.switches(events))")
        #expect(second.server.requests.contains { $0.path == "seg0.ts" }, "\(events.tags.map { $0.pts ?? -1 }) \(first.server.requests.map(\.path)) \(events.warnings) \(events.failures)")
    }

    /// A premium service's shape: `SegmentBase` with a `sidx`, the Representation listed once per
    /// CDN with the same id and its own tokenised BaseURL; the first CDN gone from the start.
    @Test func theSameRepresentationPerCDNIsOneWithCopies() async throws {
        let first = try CDN(host: "127.0.0.1") { _ in true }
        let second = try CDN(host: "127.0.0.2")
        defer { first.server.stop(); second.server.stop() }
        let origin = try Self.origin("indexed") { text in
            let start = text.range(of: "<Representation ")!.lowerBound, end = text.range(of: "</Representation>")!.upperBound
            let representation = String(text[start..<end])
            let copies = [first, second].map { cdn in
                representation.replacingOccurrences(of: "<BaseURL>audio-0.mp4</BaseURL>",
                                                    with: "<BaseURL>\(cdn.url("indexed/audio-0.mp4"))?token=abc</BaseURL>")
            }
            return text.replacingCharacters(in: start..<end, with: copies.joined(separator: "\n"))
        }
        defer { origin.stop() }
        let mpd = try MPDParser.parse(try await Fetcher().fetch(origin.url("manifest.mpd"), as: .playlist), location: origin.url("manifest.mpd"))
        #expect(mpd.periods[0].adaptationSets[0].representations.map(\.baseURLs)
            == [[first.url("indexed/audio-0.mp4?token=abc"), second.url("indexed/audio-0.mp4?token=abc")]])

        let events = await Samples.scan(origin.url("manifest.mpd"), fetcher: Fetcher(retry: .none))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("indexed")))
        #expect(Self.switches(events).count == 1, "\(Self.switches(events))")
        #expect(second.server.requests.allSatisfy { $0.query["token"] == "abc" || !$0.path.hasSuffix(".mp4") })
    }

    /// Where the copies are, and in what order: priorities, then weights, then document order,
    /// level by level; at most `maximumCopies`.
    @Test func baseURLsAreCopiesInTheOrderDVBGives() throws {
        let text = """
            <?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:dvb="urn:dvb:dash:dash-extensions:2014-1" type="static" mediaPresentationDuration="PT4S">
            <BaseURL dvb:priority="2">https://c.example/</BaseURL><BaseURL dvb:priority="1" dvb:weight="1">https://a.example/</BaseURL>
            <BaseURL dvb:priority="1" dvb:weight="5">https://b.example/</BaseURL>
            <Period><AdaptationSet><Representation id="v" bandwidth="1"><BaseURL>v/</BaseURL><BaseURL>w/</BaseURL>
            <SegmentTemplate media="s$Number$.m4s" duration="4"/></Representation></AdaptationSet></Period></MPD>
            """
        let representation = try MPDParser.parse(Array(text.utf8), location: "https://origin.example/x.mpd").periods[0].adaptationSets[0].representations[0]
        #expect(representation.baseURLs == ["https://b.example/v/", "https://b.example/w/", "https://a.example/v/", "https://a.example/w/",
                                            "https://c.example/v/", "https://c.example/w/"])
        #expect(representation.address("https://b.example/v/s7.m4s", inCopy: 4) == "https://c.example/v/s7.m4s")
        let many = text.replacingOccurrences(of: "<BaseURL>v/</BaseURL>", with: (0..<10).map { "<BaseURL>\($0)/</BaseURL>" }.joined())
        #expect(try MPDParser.parse(Array(many.utf8), location: "https://origin.example/x.mpd").periods[0].adaptationSets[0]
            .representations[0].baseURLs.count == MPDParser.maximumCopies)
    }
}
