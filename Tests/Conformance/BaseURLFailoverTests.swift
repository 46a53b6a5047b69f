import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// DVB A168 §10.8.2.4's example of BaseURLs, as dash.js's test "should select baseUrls as
/// defined in the example in DVB A168 10.8.2.4" (test/unit/test/streaming/streaming.utils.
/// DVBSelector.js) and Media3's BaseUrlExclusionListTest
/// (`selectBaseUrl_excludeByServiceLocation_excludesAllBaseUrlOfSameServiceLocation`,
/// `selectBaseUrl_excludeByPriority_excludesAllBaseUrlsOfSamePriority`) read it: a failed
/// BaseURL excludes its whole priority level and every BaseURL of its service location, and
/// the next comes from the lowest priority left. Media3 moves on from a 404 at once
/// (`DefaultDashChunkSourceTest.getNextChunk_onChunkLoadErrorLocationExclusionEnabled_correctFallbackBehavior`).
/// Among equals we take the heaviest, then the first listed (players draw by weight).
@Suite("Conformance: DVB BaseURL failover", .timeLimit(.minutes(1)))
struct BaseURLFailoverTests {
    @Test func aFailedBaseURLExcludesItsPriorityAndItsServiceLocation() async throws {
        // The example's seven BaseURLs (location, priority, weight), a host each: 127.0.0.2 to .8.
        let example = [("A", 1, 10), ("B", 1, 30), ("C", 1, 60), ("C", 3, 1), ("B", 4, 1), ("D", 5, 1), ("E", 5, 1)]
        // The heaviest of priority 1 (C, 60), then B at 4 (C at 3 shares the failed location), fail.
        let failing: Set<Int> = [2, 4]
        let root = Samples.folder.appendingPathComponent("dash")
        let cdns = try example.indices.map { index in
            try LocalHTTPServer(host: "127.0.0.\(index + 2)") { request in
                failing.contains(index) ? LocalHTTPServer.Response(status: 404) : .file(request.path, in: root)
            }
        }
        defer { cdns.forEach { $0.stop() } }
        let bases = example.enumerated().map { index, entry in
            #"<BaseURL serviceLocation="\#(entry.0)" dvb:priority="\#(entry.1)" dvb:weight="\#(entry.2)">\#(cdns[index].url("timeline/"))</BaseURL>"#
        }.joined()
        let origin = try DASHCopyTests.origin("timeline") { text in
            text.replacingOccurrences(of: "<Period ", with: bases + "<Period ")
                .replacingOccurrences(of: "<MPD ", with: #"<MPD xmlns:dvb="urn:dvb:dash:dash-extensions:2014-1" "#)
        }
        defer { origin.stop() }
        let started = ContinuousClock.now
        let events = await Samples.scan(origin.url("manifest.mpd"), fetcher: Fetcher(retry: Samples.quickRetry))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("timeline")), "every tag, once")
        #expect(events.failures.isEmpty, "\(events.failures)")
        let switched = DASHCopyTests.switches(events).map { "\($0.from) -> \($0.to)" }
        #expect(switched == ["\(cdns[2].url("timeline/")) -> \(cdns[4].url("timeline/"))", "\(cdns[4].url("timeline/")) -> \(cdns[5].url("timeline/"))"],
                "\(switched)")
        #expect(cdns.map(\.requests.count) == [0, 0, 1, 0, 1, cdns[5].requests.count, 0] && cdns[5].requests.count > 1,
                "each failing BaseURL asked once, not retried; the others of its level and location never: \(cdns.map(\.requests.count))")
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
