import Foundation
import Logging
import Prometheus
import SampleGenerator
import Testing
@testable import ID3Meter
@testable import ID3MeterServe

/// `serve`'s `audit_renditions`: a live ladder whose second rendition loses its tags mid-run,
/// and later gets them back. The meter plays the first and never notices; the audit does,
/// within an interval, in the channel's status, an alert record naming the rendition, and a series.
@Suite("serve: renditions audited", .timeLimit(.minutes(2)))
struct RenditionAuditTests {
    /// Two renditions of one live stream (the same tags, one a second, in 1 s segments); `b`'s
    /// segments in `untagged` carry none. Segment n is published n + 1 s after `start`.
    final class Ladder: Sendable {
        let a: LiveStream, b: LiveStream
        let server: LocalHTTPServer

        init(start: Date, untagged: Range<Int>) throws {
            var stream = LiveStream(segmentDuration: 1, tagInterval: 1, windowSize: 6, startDate: start)
            stream.seed = 7
            a = stream
            stream.untagged = untagged
            b = stream
            let (a, b) = (a, b)
            server = try LocalHTTPServer { request in
                let parts = request.path.split(separator: "/", maxSplits: 1).map(String.init)
                var inner = request
                inner.path = parts.last ?? ""
                switch parts.first {
                case "master.m3u8":
                    let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=200000,FRAME-RATE=29.970\na/live.m3u8\n"
                        + "#EXT-X-STREAM-INF:BANDWIDTH=800000,FRAME-RATE=29.970\nb/live.m3u8\n"
                    return LocalHTTPServer.Response(body: Array(master.utf8), contentType: "application/vnd.apple.mpegurl")
                case "a": return a.respond(to: inner)
                case "b": return b.respond(to: inner)
                default: return .notFound
                }
            }
        }
    }

    @Test func aRenditionThatLosesItsTagsIsRaisedWithinAnIntervalAndClearedWhenTheyReturn() async throws {
        let start = Date().addingTimeInterval(-20)
        // b's tags stop with segment 26 (published 7 s from now) and come back at 34 (15 s).
        let ladder = try Ladder(start: start, untagged: 26..<34)
        defer { ladder.server.stop() }
        let registry = PrometheusCollectorRegistry()
        let collected = CollectedRecords()
        let interval = 3.0
        let config = try LineupConfig.parse("""
            channels:
              - {name: ladder, url: "\(ladder.server.url("master.m3u8"))", audit_renditions: \(interval / 60)}
            """, file: "lineup.yaml")
        #expect(config.channels.first?.renditionAudit == interval)
        let lineup = Lineup(fetcher: Fetcher(ioTimeout: .seconds(5), retry: Samples.quickRetry), output: OutputSet([collected]),
                            logger: Logger(label: "audit-test"), metrics: PrometheusMetricsFactory.lineup(registry: registry))
        await lineup.apply(config)
        func alerts() -> [Stamped<MeterRecord.Alert>] { collected.all.alerts.filter { $0.name == "renditions_differ" } }
        let deadline = ContinuousClock.now + .seconds(40)
        while alerts().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let raised = try #require(collected.all.first { $0.alert?.name == "renditions_differ" })
        // The edge's three segments are untagged from segment 28's publication on (29 s after
        // start); audits come every 3 s, each taking about a second: raised within an interval.
        let loss = start.addingTimeInterval(29).timeIntervalSince1970
        #expect(raised.sentAt >= loss - 2 && raised.sentAt <= loss + interval + 2, "\(raised.sentAt - loss) s after the loss reached the edge")
        let alert = try #require(raised.alert)
        #expect(alert.active && alert.message?.hasPrefix("renditions differ: " + ladder.server.url("b/live.m3u8") + ": ") == true, "\(alert)")
        #expect(alert.message?.contains(ladder.server.url("a/live.m3u8")) == false)
        let status = await lineup.statuses.first
        #expect(status?.renditionsDiffering.count == 1 && status?.renditionsDiffering.first?.hasPrefix(ladder.server.url("b/live.m3u8")) == true)
        #expect(ServeCommandTests.samples(registry.emitToString())[#"id3meter_channel_renditions_differing{channel="ladder"}"#] == 1)
        // The metered rendition never lost a tag.
        #expect(status?.alerts == [])

        // Tags back in b from segment 34: the edge is whole again from 37 s after start.
        while alerts().last?.active != false, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let cleared = try #require(collected.all.last { $0.alert?.name == "renditions_differ" })
        #expect(cleared.alert?.active == false && cleared.alert?.message == "every rendition carries the same tags")
        #expect(cleared.sentAt <= start.addingTimeInterval(37).timeIntervalSince1970 + interval + 2)
        #expect(ServeCommandTests.samples(registry.emitToString())[#"id3meter_channel_renditions_differing{channel="ladder"}"#] == 0)
        await lineup.removeAll()
    }

    /// The audit of an intact VOD ladder: a few segments of each, the same tags; one whose
    /// variant lost its timed ID3 is named.
    @Test(arguments: [("master-intact.m3u8", nil), ("master-untagged.m3u8", "untagged.m3u8")])
    func anAuditReadsAFewSegmentsOfEach(_ sample: String, _ atFault: String?) async throws {
        let audit = RenditionAudit(input: Samples.path("ladder/" + sample), scanner: TagScanner(), segments: 2)
        let comparison = try #require(await audit.run())
        #expect(comparison.renditions.allSatisfy { $0.readable })
        #expect(comparison.renditions.filter { !$0.passed }.map { Location.name($0.name) } == (atFault.map { [$0] } ?? []))
        // Two segments from the start of a VOD: seg0 and seg1 carry a tag each.
        #expect(comparison.renditions.first?.tags == 2)
    }
}
