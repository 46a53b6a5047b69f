import Foundation
import Logging
import Prometheus
import Testing
@testable import ID3Meter
@testable import ID3MeterServe
import SampleGenerator

/// `serve` judges each channel's tags with the QA report's checks: a channel whose tags lose
/// their PMT descriptor or drift from their audio alerts as one without tags does.
@Suite("serve: QA checks per channel", .timeLimit(.minutes(2)))
struct ChannelChecksTests {
    /// The events of a validator sample (independent writer, `scripts/validator_samples.py`).
    static func events(_ sample: String) async -> [MediaEvent] { await Samples.scan(Samples.path("validator/\(sample).ts")) }

    @Test func aCheckFailsForTheWindowItFailedInAndTheNextThenClears() async {
        var checks = ChannelChecks(channel: "c", at: 0)
        var changes: [(Double, [String])] = []
        func feed(_ events: [MediaEvent], at start: Double) {
            for (index, event) in events.enumerated() where checks.add(event, at: start + Double(index) * 0.01) {
                changes.append((start, checks.failing))
            }
        }
        feed(await Self.events("no_descriptor"), at: 0)
        #expect(changes.map(\.1) == [["pmt_descriptor"]], "found at the first tag, once")
        let clean = await Self.events("clean")
        feed(clean, at: ChannelChecks.window)        // the next window: the last one still failed
        #expect(checks.failing == ["pmt_descriptor"])
        feed(clean, at: 2 * ChannelChecks.window)    // a whole clean window behind it: cleared
        #expect(checks.failing == [])
        #expect(changes.map(\.1) == [["pmt_descriptor"], []])
    }

    /// A segment's tags are judged when the segment is in, once, not at each tag (a report at
    /// each tag was about 3% of `serve` at 1,000 channels): the no-descriptor sample's tags as
    /// one HLS segment's fail the check at the segment's end.
    @Test func aSegmentsTagsAreJudgedAtItsEnd() async {
        let segment = TagOrigin.Segment(uri: "https://h/seg0.ts", mediaSequence: 0)
        let events = await Self.events("no_descriptor").map { event -> MediaEvent in
            guard case .tag(let timed) = event else { return event }
            return .tag(TimedTag(tag: timed.tag, pts: timed.pts, origin: TagOrigin(source: "c", segment: segment), carriage: timed.carriage,
                                 transportStream: timed.transportStream))
        } + [.segment(segment)]
        #expect(events.count(where: { if case .tag = $0 { true } else { false } }) > 1)
        var checks = ChannelChecks(channel: "c", at: 0)
        let changedAt = events.indices.filter { checks.add(events[$0], at: 1) }
        #expect(changedAt == [events.count - 1] && checks.failing == ["pmt_descriptor"], "\(changedAt) of \(events.count)")
    }

    @Test func tagsOffTheirAudioFailPastTheGuidesTolerance() async {
        var checks = ChannelChecks(channel: "c", at: 0)
        var failing: [[String]] = []
        for event in await Self.events("tags_off_audio") where checks.add(event, at: 1) { failing.append(checks.failing) }
        // Twelve tags 30 s off: the eighth passes the 7 tolerated.
        #expect(failing == [["tag_placement"]])
    }

    /// A line-up channel whose stream has no metadata descriptor: the status, the alert record
    /// and the series say so.
    @Test func aChannelFailingACheckAlertsInItsStatusRecordsAndMetrics() async throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let registry = PrometheusCollectorRegistry()
        let collected = CollectedRecords()
        let config = try LineupConfig.parse("""
            defaults: {vod: true}
            channels:
              - {name: bare, url: "\(server.url("validator/no_descriptor.ts"))"}
            """, file: "lineup.yaml")
        let lineup = Lineup(fetcher: Fetcher(ioTimeout: .seconds(5), retry: Samples.quickRetry), output: OutputSet([collected]),
                            logger: Logger(label: "checks-test"), metrics: PrometheusMetricsFactory.lineup(registry: registry))
        await lineup.apply(config)
        // The status changes before the alert record is written: both are waited for.
        let deadline = ContinuousClock.now + .seconds(30)
        var status = await lineup.statuses.first
        var alert = collected.all.alerts.first { $0.name == "failing_checks" }
        while status?.failingChecks.isEmpty ?? true || alert == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            status = await lineup.statuses.first
            alert = collected.all.alerts.first { $0.name == "failing_checks" }
        }
        #expect(status?.failingChecks == ["pmt_descriptor"])
        #expect(status?.alerts == [], "tags still come: no tag-loss alert")
        #expect(alert?.active == true && alert?.channel == "bare" && alert?.message == "failing the QA checks pmt_descriptor")
        let metrics = ServeCommandTests.samples(registry.emitToString())
        #expect(metrics[#"id3meter_channel_failing_checks{channel="bare"}"#] == 1)
        await lineup.removeAll()
    }
}
