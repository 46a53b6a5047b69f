import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// HLS interstitials (`EXT-X-DATERANGE CLASS="com.apple.hls.interstitial"`) played as players
/// play them: the asset's tags delivered in the break's place on the primary's timeline, each
/// record naming the break; the primary content a break replaces not delivered; an asset that
/// cannot be had said, the primary going on. The primary is the fMP4 sample, the ads the HLS
/// sample's first segments: both with their writer's ground truth.
@Suite("HLS interstitials", .serialized, .timeLimit(.minutes(3)))
struct InterstitialTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)
    /// The primary's segments: name, EXTINF.
    static let primary = [("seg0.m4s", 6.006), ("seg1.m4s", 6.006), ("seg2.m4s", 2.002)]

    struct Tag: Equatable, CustomStringConvertible {
        var pts: Int64?
        var payload: String?
        var interstitial: String?
        var description: String { "\(interstitial ?? "primary") \(pts ?? -1)" }
    }

    static func primaryTags(_ segments: Set<String>) throws -> [Tag] {
        try Samples.expected("fmp4/expected.jsonl").filter { $0.nielsen && segments.contains($0.segment ?? "") }
            .map { Tag(pts: $0.pts, payload: $0.owner, interstitial: nil) }
    }

    static func adTags(_ segments: Set<String>, in id: String) throws -> [Tag] {
        try Samples.expected("hls/expected.jsonl").filter { $0.nielsen && segments.contains($0.segment ?? "") }
            .map { Tag(pts: $0.pts, payload: $0.owner, interstitial: id) }
    }

    static func date(after seconds: Double) -> String { ProgramDateTime.format(start.addingTimeInterval(seconds)) }

    /// The primary playlist with `ranges` (EXT-X-DATERANGE attribute lists) in its header.
    static func primaryPlaylist(_ ranges: [String]) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:6", "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-MAP:URI=\"init.mp4\""]
        lines += ranges.map { "#EXT-X-DATERANGE:" + $0 }
        var elapsed = 0.0
        for (name, duration) in primary {
            lines += ["#EXT-X-PROGRAM-DATE-TIME:\(date(after: elapsed))", String(format: "#EXTINF:%.3f,", duration), name]
            elapsed += duration
        }
        return (lines + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n")
    }

    /// An ad asset: the HLS sample's segments `names`.
    static func adPlaylist(_ names: [String]) -> String {
        (["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:7", "#EXT-X-PLAYLIST-TYPE:VOD"]
            + names.flatMap { ["#EXTINF:6.006,", $0] } + ["#EXT-X-ENDLIST", ""]).joined(separator: "\n")
    }

    static let scenarios: [String: [String]] = [
        // Inserted between the first two segments: the primary resumes where it left.
        "insert": [#"ID="break-1",CLASS="com.apple.hls.interstitial",START-DATE="\#(date(after: 6.006))",X-ASSET-URI="../ad/both.m3u8",X-RESUME-OFFSET=0"#],
        // An ad pod from a list, cut by its playout limit after the first asset, replacing the
        // primary's second segment.
        "replace": [#"ID="pod-1",CLASS="com.apple.hls.interstitial",START-DATE="\#(date(after: 6.006))",DURATION=6.006,X-ASSET-LIST="../ad/pod.json",X-RESUME-OFFSET=6.006,X-PLAYOUT-LIMIT=6.006"#],
        // A pre-roll, a break whose asset is missing, and one that names a local file.
        "pre": [#"ID="pre-1",CLASS="com.apple.hls.interstitial",START-DATE="\#(date(after: 0))",CUE="PRE",X-ASSET-URI="../ad/both.m3u8",X-RESUME-OFFSET=0"#,
                #"ID="gone-1",CLASS="com.apple.hls.interstitial",START-DATE="\#(date(after: 12.012))",X-ASSET-URI="../ad/missing.m3u8",X-RESUME-OFFSET=0"#,
                #"ID="local-1",CLASS="com.apple.hls.interstitial",START-DATE="\#(date(after: 12.012))",X-ASSET-URI="file:///etc/passwd",X-RESUME-OFFSET=0"#,
                #"ID="scte",CLASS="com.example.other",START-DATE="\#(date(after: 6.006))",X-ASSET-URI="../ad/both.m3u8""#],
    ]

    static func expected(_ scenario: String) throws -> [Tag] {
        switch scenario {
        case "insert":
            try primaryTags(["seg0.m4s"]) + adTags(["seg0.ts", "seg1.ts"], in: "break-1") + primaryTags(["seg1.m4s", "seg2.m4s"])
        case "replace":
            try primaryTags(["seg0.m4s"]) + adTags(["seg0.ts"], in: "pod-1") + primaryTags(["seg2.m4s"])
        default:
            try adTags(["seg0.ts", "seg1.ts"], in: "pre-1") + primaryTags(["seg0.m4s", "seg1.m4s", "seg2.m4s"])
        }
    }

    /// A live channel and, under `ad/`, the live stream its breaks' asset is (`ad/list.json`,
    /// an asset list naming it).
    static func liveServer(_ channel: LiveChannel, ad: LiveStream) throws -> LocalHTTPServer {
        try LocalHTTPServer { request in
            guard request.path.hasPrefix("ad/") else { return channel.respond(to: request) }
            if request.path == "ad/list.json" {
                return .init(body: Array(#"{"ASSETS": [{"URI": "live.m3u8", "DURATION": 3}]}"#.utf8), contentType: "application/json")
            }
            var inner = request
            inner.path = String(request.path.dropFirst(3))
            return ad.respond(to: inner)
        }
    }

    /// The primary (`primary/<scenario>.m3u8`, of `scenarios` and `more`) and the ads.
    static func server(more: [String: [String]] = [:]) throws -> LocalHTTPServer {
        let fmp4 = Samples.folder.appendingPathComponent("fmp4"), hls = Samples.folder.appendingPathComponent("hls/low")
        return try LocalHTTPServer { request in
            let parts = request.path.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return .notFound }
            switch (parts[0], parts[1]) {
            case ("primary", let name) where name.hasSuffix(".m3u8"):
                guard let ranges = scenarios[String(name.dropLast(5))] ?? more[String(name.dropLast(5))] else { return .notFound }
                return .init(body: Array(primaryPlaylist(ranges).utf8), contentType: "application/vnd.apple.mpegurl")
            case ("primary", let name): return .file(name, in: fmp4)
            case ("ad", "both.m3u8"): return .init(body: Array(adPlaylist(["seg0.ts", "seg1.ts"]).utf8))
            case ("ad", "one.m3u8"): return .init(body: Array(adPlaylist(["seg0.ts"]).utf8))
            case ("ad", "two.m3u8"): return .init(body: Array(adPlaylist(["seg1.ts"]).utf8))
            case ("ad", "empty.json"): return .init(body: Array(#"{"ASSETS": []}"#.utf8), contentType: "application/json")
            case ("ad", "pod.json"):
                return .init(body: Array(#"{"ASSETS": [{"URI": "one.m3u8", "DURATION": 6.006}, {"URI": "two.m3u8", "DURATION": 6.006}]}"#.utf8),
                             contentType: "application/json")
            case ("ad", let name): return .file(name, in: hls)
            default: return .notFound
            }
        }
    }

    static func found(_ events: [MediaEvent]) -> [Tag] {
        events.tags.compactMap { timed in
            timed.nielsenTags.first.map { Tag(pts: timed.pts, payload: $0.payload, interstitial: timed.origin.segment?.interstitial?.id) }
        }
    }

    static func recorded(_ stdout: String) -> [Tag] {
        stdout.split(separator: "\n").compactMap { line in
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  record["type"] as? String == "send_id3" else { return nil }
            return Tag(pts: record["pts"] as? Int64, payload: record["payload"] as? String, interstitial: record["interstitial"] as? String)
        }
    }

    @Test(arguments: ["insert", "replace", "pre"])
    func scannedAndMeteredInTheBreaksPlace(_ scenario: String) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let url = server.url("primary/\(scenario).m3u8")
        let expected = try Self.expected(scenario)
        let events = await Samples.scan(url)
        #expect(Set(Self.found(events).map(\.description)) == Set(expected.map(\.description)), "scan \(scenario)")
        #expect(Self.found(events).count == expected.count)
        let run = try await offThePool { try Command.run(["--speed", "max", "--format", "jsonl", url]) }
        #expect(Self.recorded(run.stdout) == expected, "meter \(scenario): \(run.stderr)")
        let asked = server.requests.map(\.path)
        switch scenario {
        case "pre":
            #expect(run.status == 1, "two breaks failed")
            // The URL asked, with the playback's id (`InterstitialRequest`).
            #expect(run.stderr.contains("interstitial gone-1: cannot fetch playlist \(server.url("ad/missing.m3u8"))?_HLS_primary_id="), "\(run.stderr)")
            #expect(run.stderr.contains(": HTTP 404"), "\(run.stderr)")
            #expect(run.stderr.contains("interstitial local-1:") && run.stderr.contains("file:///etc/passwd"), "\(run.stderr)")
            #expect(events.failures.count == 2)
        case "replace":
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!asked.contains("primary/seg1.m4s"), "the replaced segment is not fetched")
            #expect(!asked.contains("ad/two.m3u8"), "the playout limit ends the pod after its first asset")
        default:
            #expect(run.status == 0, "\(run.stderr)")
        }
        // The QA report judges a break's tags as a stream of their own.
        if scenario == "insert" {
            let streams = Set(events.tags.compactMap { $0.carriage?.stream })
            #expect(streams.filter { $0.contains("interstitial") } == ["PID 0x0102 in interstitial break-1"], "\(streams)")
            #expect(streams.count > 1, "the primary's own streams")
        }
    }

    /// `serve` plays the break in real time in its place, its records naming it.
    @Test func servedWithTheBreakInItsPlace() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let running = try await RunningLineup(channels: ["c": server.url("primary/insert.m3u8")], alertAfter: 60)
        let (statuses, ended) = try await running.statuses { $0.allSatisfy { $0.state == .ended } }
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        let delivered = running.deliveries("c").map { Tag(pts: $0.pts, payload: $0.payload, interstitial: $0.interstitial) }
        #expect(delivered == (try Self.expected("insert")))
    }

    /// Killed in the middle of a break and restarted on its `--state`: the break is played again
    /// from the primary segment before it, what was delivered held back; nothing lost or doubled.
    @Test func aMeterKilledInABreakResumesWithoutLosingOrDoublingATag() throws {
        let server = try Self.server()
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("records.jsonl")
        let arguments = [server.url("primary/insert.m3u8"), "--output", file.path, "--state", folder.appendingPathComponent("state").path]
        func delivered() -> [Tag] { Self.recorded((try? String(contentsOf: file, encoding: .utf8)) ?? "") }
        let first = try Command.launch(arguments).process
        try KillAndResumeTests.wait { delivered().filter { $0.interstitial != nil }.count >= 2 }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let second = try Command.run(arguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(delivered() == (try Self.expected("insert")))
    }

    /// A live channel schedules a break at segment 8: the meter joins, plays the asset when the
    /// primary reaches it, then the primary from where it left, every tag once.
    @Test func aLiveBreakIsPlayedWhenThePrimaryReachesIt() async throws {
        var ad = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 10, segmentCount: 3, startDate: Date(timeIntervalSince1970: 0))
        ad.seed = 77
        let channel = LiveChannel(preroll: 3) { date in
            var stream = LiveStream(segmentDuration: 1, tagInterval: 0.5, windowSize: 30, segmentCount: 14, startDate: date)
            stream.seed = 5
            stream.breaks = [.init(id: "live-break", atSegment: 8, assetURI: "ad/live.m3u8")]
            return stream
        }
        let server = try Self.liveServer(channel, ad: ad)
        defer { server.stop() }
        let run = try await offThePool { try Command.run(["--format", "jsonl", server.url("master.m3u8")]) }
        #expect(run.status == 0, "\(run.stderr)")
        let stream = try #require(channel.liveStream)
        let delivered = Self.recorded(run.stdout)
        let first = try #require(delivered.first { $0.interstitial == nil }?.pts)
        let firstSegment = try #require((0..<14).first { stream.tags(inSegment: $0).contains { $0.pts == first } })
        func primary(_ range: Range<Int>) -> [Tag] {
            range.flatMap { stream.tags(inSegment: $0) }.map { Tag(pts: $0.pts, payload: $0.owner, interstitial: nil) }
        }
        let breakTags = (0..<3).flatMap { ad.tags(inSegment: $0) }.map { Tag(pts: $0.pts, payload: $0.owner, interstitial: "live-break") }
        #expect(firstSegment < 8)
        #expect(delivered == primary(firstSegment..<8) + breakTags + primary(8..<14))
    }

    @Test func theScheduleFollowsTheSpecification() throws {
        let text = Self.primaryPlaylist(Self.scenarios["pre"]! + Self.scenarios["replace"]!)
        guard case .media(let playlist) = try PlaylistParser.parse(text, location: "https://h/p/x.m3u8") else { Issue.record("media"); return }
        #expect(playlist.interstitials.map(\.id) == ["pre-1", "gone-1", "local-1", "pod-1"], "the other class is not an interstitial")
        let pod = try #require(playlist.interstitials.last)
        #expect(pod.assetList == "https://h/ad/pod.json" && pod.resumeOffset == 6.006 && pod.playoutLimit == 6.006 && pod.duration == 6.006)
        var schedule = InterstitialSchedule()
        schedule.learn(playlist.interstitials)
        #expect(schedule.due(beforeSegmentAt: Self.start, joined: false).map(\.id) == ["pre-1"])
        #expect(schedule.due(beforeSegmentAt: Self.start.addingTimeInterval(6.006), joined: false).map(\.id) == ["pod-1"])
        schedule.played(pod, for: 6.006)
        let replaced = schedule.replacesSegment(at: Self.start.addingTimeInterval(6.006), duration: 6.006)
        let after = schedule.replacesSegment(at: Self.start.addingTimeInterval(12.012), duration: 2.002)
        #expect(replaced && !after)
        #expect(schedule.due(beforeSegmentAt: Self.start.addingTimeInterval(12.012), joined: false).map(\.id) == ["gone-1", "local-1"])
        #expect(schedule.due(beforeSegmentAt: Self.start.addingTimeInterval(20), joined: false).isEmpty, "each once")

        // Joined live after a break began: it is not played.
        var joined = InterstitialSchedule()
        joined.learn(playlist.interstitials)
        #expect(joined.due(beforeSegmentAt: Self.start.addingTimeInterval(13), joined: true).map(\.id) == ["pre-1"])

        #expect(throws: Interstitial.AssetListError.self) { try Interstitial.AssetList.parse(Array("[1]".utf8), location: "https://h/l.json") }
        let many = "{\"ASSETS\": [" + Array(repeating: "{\"URI\": \"a.m3u8\"}", count: 101).joined(separator: ",") + "]}"
        #expect(throws: Interstitial.AssetListError.tooManyAssets(101, limit: 100)) {
            try Interstitial.AssetList.parse(Array(many.utf8), location: "https://h/l.json")
        }
    }
}
