import CID3MeterShim
import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// MPDs from someone else's server, written to hurt: references to local files and other
/// protocols, entities, a remote Period, a size past the limit, a timeline of 2^31 segments on a
/// clock ten years old. Each is refused or bounded with words that say why, and the server sees
/// no request it should not.
@Suite("Hostile MPDs", .timeLimit(.minutes(2)))
struct HostileMPDTests {
    /// Serves `mpd` as `hostile.mpd` and the DASH samples beside it.
    static func serve(_ mpd: String) throws -> LocalHTTPServer {
        let samples = Samples.folder.appendingPathComponent("dash")
        return try LocalHTTPServer { request in
            request.path == "hostile.mpd" ? LocalHTTPServer.Response(body: Array(mpd.utf8), contentType: "application/dash+xml")
                : .file(request.path, in: samples)
        }
    }

    static func representation(_ inner: String, attributes: String = "") -> String {
        #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S" \#(attributes)><Period><AdaptationSet contentType="audio"><Representation id="1" bandwidth="16000">\#(inner)</Representation></AdaptationSet></Period></MPD>"#
    }

    @Test func localFilesAndOtherProtocolsAreRefused() async throws {
        // A local file is refused as one (no scheme named); another protocol by its scheme.
        let references: [(String, String?)] = [
            ("<BaseURL>file:///etc/</BaseURL>", nil),
            (#"<BaseURL>timeline/</BaseURL><SegmentTemplate duration="4" initialization="file:///dev/zero" media="chunk-1-$Number%05d$.m4s"/>"#, nil),
            (#"<SegmentTemplate duration="4" media="data:,$Number$"/>"#, "data"),
            (#"<SegmentList duration="4"><SegmentURL media="tcp://127.0.0.1:9/"/></SegmentList>"#, "tcp"),
        ]
        for (inner, scheme) in references {
            let body = inner.hasPrefix("<BaseURL>file")
                ? inner + #"<SegmentTemplate duration="4" media="passwd"/>"#
                : inner
            let server = try Self.serve(Self.representation(body))
            defer { server.stop() }
            let events = await Samples.scan(server.url("hostile.mpd"))
            #expect(events.tags.isEmpty)
            let refusals = events.failures.compactMap { failure -> String?? in
                guard case .segmentSkipped(_, let cause as SegmentLoadError) = failure.kind, case .refused(_, let refused, _) = cause else { return nil }
                return .some(refused)
            }
            #expect(!refusals.isEmpty && refusals.count == events.failures.count && refusals.allSatisfy { $0 == scheme }, "\(inner): \(events.failures)")
            let words = scheme.map { "may not reference \($0): URLs" } ?? "a playlist loaded over http(s) may reference only http(s) URLs"
            #expect(events.failures.allSatisfy { "\($0)".contains(words) }, "\(events.failures)")
            #expect(server.requests.map(\.path) == ["hostile.mpd"], "nothing else was asked of the server either")
        }
    }

    @Test func entitiesARemotePeriodAndSizeAreRefusedInWords() async throws {
        let xxe = #"<?xml version="1.0"?><!DOCTYPE MPD [<!ENTITY x SYSTEM "http://127.0.0.1:9/x">]><MPD><BaseURL>&x;</BaseURL><Period/></MPD>"#
        let server = try Self.serve(xxe)
        defer { server.stop() }
        let refused = await Samples.scan(server.url("hostile.mpd"))
        #expect(refused.failures.count == 1)
        #expect("\(refused.failures.first.map { "\($0)" } ?? "")".contains("a document type or entity declaration (refused"), "\(refused.failures)")

        let remote = #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:xlink="http://www.w3.org/1999/xlink" type="static" mediaPresentationDuration="PT20S"><Period id="ad" duration="PT8S" xlink:href="http://127.0.0.1:9/ad.xml" xlink:actuate="onLoad"/></MPD>"#
        let xlink = try Self.serve(remote)
        defer { xlink.stop() }
        let warned = await Samples.scan(xlink.url("hostile.mpd"))
        // Resolved on load, it is fetched; nothing answers there: said, with why, and passed.
        let said = warned.warnings.compactMap { if case .remotePeriod(let reference, let failure?, _) = $0.kind { (reference, failure) } else { nil } }
        #expect(said.map(\.0) == ["http://127.0.0.1:9/ad.xml"] && said.allSatisfy { $0.1 is MPDLoader.RemotePeriodFailure }, "\(warned.warnings)")
        #expect(xlink.requests.map(\.path) == ["hostile.mpd"])

        let big = Self.representation(String(repeating: "<!-- padding -->", count: 10_000) + #"<SegmentTemplate duration="4" media="x"/>"#)
        let large = try Self.serve(big)
        defer { large.stop() }
        var limits = Fetcher.Limits()
        limits.maximumPlaylistBytes = 64 << 10
        let tooLarge = await Samples.scan(large.url("hostile.mpd"), fetcher: Fetcher(retry: Samples.quickRetry, limits: limits))
        #expect(tooLarge.failures.count == 1 && "\(tooLarge.failures[0])".contains("more than the 64 KB allowed"), "\(tooLarge.failures.map { "\($0)" })")
    }

    /// A live MPD ten years old whose only timeline entry repeats 2^31 times, without a
    /// time-shift buffer: a scan looks back a bounded span, keeps the newest 10,000 segments
    /// (saying which it left), and gives up after a run of losses (404s here), in seconds, not
    /// after counting billions.
    @Test func aHugeOldTimelineIsJoinedWithoutCountingIt() async throws {
        let start = ProgramDateTime.format(Date().addingTimeInterval(-10 * 365 * 86_400))
        let mpd = #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="\#(start)"><Period start="PT0S"><AdaptationSet contentType="audio"><Representation id="1" bandwidth="1"><SegmentTemplate timescale="1" media="s$Number$.m4s"><SegmentTimeline><S t="0" d="1" r="2147483648"/><S d="1" r="-1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period></MPD>"#
        let server = try Self.serve(mpd)
        defer { server.stop() }
        let began = ContinuousClock.now
        var events: [MediaEvent] = []
        await DASHWalk(input: server.url("hostile.mpd"), loader: MPDLoader(fetcher: Fetcher(retry: Samples.quickRetry)), variant: .lowestBandwidth,
                       reloads: false, clock: ContinuousClock()).run { events.append($0) }
        #expect(ContinuousClock.now - began < .seconds(5))
        let asked = server.requests.map(\.path).filter { $0.hasSuffix(".m4s") }
        let limit = Fetcher.Limits().maximumConsecutiveLostSegments
        #expect(Set(asked).count == limit, "\(Set(asked).count) segments asked for (each tried again as 404s are)")
        #expect(asked.allSatisfy { Int($0.dropFirst().dropLast(4)).map { $0 > 300_000_000 } == true }, "\(asked.prefix(3))")
        #expect(events.failures.contains { if case .gaveUp = $0.kind { true } else { false } })
        let beyond = events.warnings.compactMap { if case .bufferBeyondReach(let numbers, let read) = $0.kind { (numbers, read) } else { nil } }
        // Six hours of 1 s segments looked back over, the newest 10,000 kept.
        #expect(beyond.count == 1 && beyond[0].1 == 10_000 && beyond[0].0.count == 6 * 3_600 - 10_000, "\(beyond)")
    }

    /// An EventStream's times reach 2^53 units: a tag that late is timed (its PTS wrapped as
    /// 33-bit PTS are), not a crash; and a Period of events alone, without a Representation,
    /// still hands them out.
    @Test func eventTimesAtTheLimitAndAPeriodOfEventsAlone() async throws {
        var factory = NielsenTagFactory(seed: 3)
        let tag = Data(ID3TagSpec(frames: [.priv(owner: factory.owner(secondsIntoDay: 36_000), data: [0x41])]).bytes()).base64EncodedString()
        let mpd = #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S"><Period><EventStream schemeIdUri="www.nielsen.com:id3:v1" value="1" timescale="1"><Event presentationTime="9007199254740992" id="1" contentEncoding="base64">\#(tag)</Event><Event presentationTime="2" id="2" contentEncoding="base64">\#(tag)</Event></EventStream></Period></MPD>"#
        let server = try Self.serve(mpd)
        defer { server.stop() }
        let events = await Samples.scan(server.url("hostile.mpd"))
        let times = events.tags.compactMap { $0.pts }
        #expect(times.count == 2 && times.allSatisfy { (0..<PTS.wrap).contains($0) }, "\(times)")
        #expect(times.contains(180_000))
    }

    /// A UTCTiming that points at a local file is not read; the walk says it uses its own clock.
    @Test func aUTCTimingOnALocalFileIsNotRead() async throws {
        let mpd = #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z" timeShiftBufferDepth="PT4S"><Period start="PT0S"/><UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="file:///etc/passwd"/></MPD>"#
        let server = try Self.serve(mpd)
        defer { server.stop() }
        var events: [MediaEvent] = []
        await DASHWalk(input: server.url("hostile.mpd"), loader: MPDLoader(fetcher: Fetcher()), variant: .lowestBandwidth,
                       reloads: false, clock: ContinuousClock()).run { events.append($0) }
        let clock = events.warnings.compactMap { if case .serverClock(let reason) = $0.kind { reason } else { nil } }
        #expect(clock.count == 1 && clock[0].contains("refused 'file:///etc/passwd'"), "\(clock)")
    }
}

/// FoundationXML leaks a few hundred bytes for each malformed document it parses (its libxml2
/// error callback's CFError), so a live channel whose origin serves the same broken MPD for a
/// week must not parse it again at each refresh.
@Suite("Broken MPD refreshes", .serialized, .timeLimit(.minutes(2)))
struct BrokenMPDRefreshTests {
    static func residentBytes() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        return (Int(statm.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// A live MPD that came back unreadable is asked for again up to every 30 s; one that could
    /// not be fetched, up to four update periods (it is likely a passing fault).
    @Test func anUnreadableMPDIsAskedForLessOften() {
        let unreadable = SegmentLoadError.unreadableMPD("live.mpd", MPDError(.notXML(line: 1, nil)))
        let unfetched = SegmentLoadError.fetch(.http(status: 503, reason: "Service Unavailable"), .mpd("live.mpd"), attempts: 1)
        let seconds = { (error: SegmentLoadError) in (1...9).map { DASHWalk<ContinuousClock>.reloadRetry(after: $0, updatePeriod: 0.5, error).seconds } }
        #expect(seconds(unreadable) == [0.5, 1, 2, 4, 8, 16, 30, 30, 30])
        #expect(seconds(unfetched) == [0.5, 1, 2, 2, 2, 2, 2, 2, 2])
        // The update period sets the first wait; a missing or tiny one is taken as 1 s, 0.5 s.
        #expect(DASHWalk<ContinuousClock>.reloadRetry(after: 1, updatePeriod: nil, unreadable) == .seconds(1))
        #expect(DASHWalk<ContinuousClock>.reloadRetry(after: 1, updatePeriod: 0.01, unfetched) == .seconds(0.5))
    }

    /// Reading a broken MPD leaks nothing (FoundationXML's error callback leaked on each), and
    /// one served again unchanged is not read again: a refresh of the same bytes costs a compare.
    @Test func brokenMPDsLeakNothingAndTheSameOneIsNotReadAgain() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("broken.mpd").path
        try Data(#"<MPD type="dynamic"><Period><AdaptationSet a=b></Period>"#.utf8).write(to: URL(fileURLWithPath: path))
        let loader = MPDLoader(fetcher: Fetcher())
        // A first round settles the allocator; a leak grows the second as much as the first.
        for _ in 0..<60_000 { _ = try? await loader.load(path) }
        idm_release_free_memory()
        let before = try Self.residentBytes()
        for _ in 0..<60_000 { _ = try? await loader.load(path) }
        let grown = try Self.residentBytes() - before
        // FoundationXML's leak made this 5-20 MB.
        #expect(grown < 2_000_000, "\(grown) bytes after 60,000 more broken MPDs")

        // A long timeline broken at its end: reading it is most of a load's time.
        let long = folder.appendingPathComponent("long.mpd").path
        let timeline = String(repeating: #"<S d="90000"/>"#, count: 40_000)
        try Data(#"<MPD type="dynamic"><Period><AdaptationSet><SegmentTemplate><SegmentTimeline>\#(timeline)</SegmentTimeline></SegmentTemplate><x a=b></Period>"#.utf8)
            .write(to: URL(fileURLWithPath: long))
        func seconds(reusing: Bool) async -> Double {
            var last: MPDLoader.Refresh?
            _ = try? await loader.load(long, unlessSameAs: &last)
            let start = ContinuousClock.now
            for _ in 0..<10 {
                if reusing { _ = try? await loader.load(long, unlessSameAs: &last) } else { _ = try? await loader.load(long) }
            }
            return (ContinuousClock.now - start).seconds
        }
        let read = await seconds(reusing: false), reused = await seconds(reusing: true)
        #expect(reused < read / 3, "reused \(reused) s, read \(read) s")
    }
}
