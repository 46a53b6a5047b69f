import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import ID3MeterServe
import SampleGenerator

/// `EXT-X-GAP` (RFC 8216bis 4.4.4.7): a segment the packager declares missing is not fetched and
/// not a failure, but it is media time without tags for the QA report and the tag-loss watch.
@Suite("EXT-X-GAP", .serialized, .timeLimit(.minutes(3)))
struct GapSegmentTests {
    @Test func theTagMarksOnlyTheNextSegment() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n#EXT-X-GAP\n#EXTINF:4,\nb.ts\n#EXTINF:4,\nc.ts\n"
        guard case .media(let media) = try PlaylistParser.parse(text, location: "p.m3u8") else {
            Issue.record("expected a media playlist"); return
        }
        #expect(media.segments.map(\.isGap) == [false, true, false])
    }

    /// The protected TS sample's three segments with the middle one declared a gap (and named
    /// where nothing is): the other two's tags exactly, no failure, and the QA report counts a
    /// segment without tags and its 4 s of media.
    @Test func aGapInAPlaylistIsMediaTimeWithoutTags() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let segments = Samples.folder.appendingPathComponent("protected/ts")
        let playlist = folder.appendingPathComponent("gap.m3u8")
        try """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXTINF:4,
            \(segments.appendingPathComponent("seg0.ts").path)
            #EXT-X-GAP
            #EXTINF:4,
            \(folder.appendingPathComponent("nothing-here.ts").path)
            #EXTINF:4,
            \(segments.appendingPathComponent("seg2.ts").path)
            #EXT-X-ENDLIST

            """.write(to: playlist, atomically: true, encoding: .utf8)
        let events = await Samples.scan(playlist.path)
        #expect(events.failures.isEmpty, "\(events.failures)")
        let expected = try ProtectedHLSTests.planted(in: ["ts/index.m3u8"]).filter { $0.segment != "seg1.ts" }
        #expect(expected.count == 3 && ProtectedHLSTests.found(events) == expected)
        #expect(events.segments.map(\.isGap) == [false, true, false])
        #expect(events.segments[1].duration == 4 && events.segments[1].uri.hasSuffix("nothing-here.ts"))

        var builder = SourceReportBuilder(source: playlist.path)
        events.forEach { builder.add($0) }
        let report = builder.report
        #expect(report.segments == 3)
        #expect(report.segmentsWithoutTags.contains { $0.hasSuffix("nothing-here.ts") })
        #expect(report.failures.isEmpty)
    }

    /// Gaps before the first segment read wait for `.opened`, to a bound: 1,200 of them, then a
    /// segment, come out all, once, in order, with the segment's tags.
    @Test func manyGapsBeforeTheFirstSegmentAreHeldToABound() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let gaps = (0..<1_200).map { "#EXT-X-GAP\n#EXTINF:4,\ngap\($0).ts" }.joined(separator: "\n")
        let segment = Samples.folder.appendingPathComponent("protected/ts/seg0.ts").path
        let playlist = folder.appendingPathComponent("gaps.m3u8")
        try "#EXTM3U\n#EXT-X-TARGETDURATION:4\n\(gaps)\n#EXTINF:4,\n\(segment)\n#EXT-X-ENDLIST\n"
            .write(to: playlist, atomically: true, encoding: .utf8)
        let events = await Samples.scan(playlist.path)
        #expect(events.failures.isEmpty)
        #expect(events.segments.map(\.mediaSequence) == Array(0...1_200))
        #expect(events.segments.filter(\.isGap).count == 1_200)
        let expected = try ProtectedHLSTests.planted(in: ["ts/index.m3u8"]).filter { $0.segment == "seg0.ts" }
        #expect(!expected.isEmpty && ProtectedHLSTests.found(events).map(\.pts) == expected.map(\.pts))
    }

    /// A live channel whose packager lists four segments as gaps: nothing asked of them, no
    /// segment failed, the gaps counted; the tags stop, so the tag-loss watch alerts, while
    /// the playlist, moving on, is not stale.
    @Test func aLiveGapAlertsForTagsButIsNotALoss() async throws {
        let channel = ServeTests.channel(seed: 7, gaps: 6..<10)
        let server = try LineupServer(["g": channel])
        defer { server.server.stop() }
        let running = try await RunningLineup(["g"], of: server)
        let (statuses, ended) = try await running.statuses { $0.first?.state == .ended }
        let metrics = running.metrics
        await running.lineup.removeAll()
        #expect(ended, "\(statuses)")
        let status = try #require(statuses.first)
        #expect(status.segmentsFailed == 0 && status.segmentsGap == 4, "\(status)")
        #expect(metrics[#"id3meter_segments_gap_total{channel="g"}"#] == 4)
        #expect(metrics[#"id3meter_segments_failed_total{channel="g"}"#] == 0)

        let join = try #require(channel.joinSegment(back: 3))
        #expect(join < 6, "joined before the gap")
        let delivered = running.deliveries("g").compactMap(\.payload)
        #expect(!delivered.isEmpty && delivered == channel.owners(from: join))

        let alerts = running.alerts("g").filter { $0.name != "failing_checks" }
        #expect(alerts.contains { $0.name == "no_tags" && $0.active }, "\(alerts)")
        #expect(!alerts.contains { $0.name == "playlist_stale" }, "\(alerts)")
        #expect(running.records("g").losses.isEmpty)

        let asked = Set(server.server.requests.map(\.path))
        #expect((6..<10).allSatisfy { !asked.contains("g/seg\($0).ts") }, "\(asked.sorted())")
        #expect(asked.contains("g/seg10.ts"))
    }
}
