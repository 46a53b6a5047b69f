import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// ISO/IEC 23009-1 §5.3.5.2: a Representation's `@id` is unique within its Period unless the
/// Representation is functionally identical to another in the Period. An MPD that lists the
/// same Representation in one AdaptationSet per CDN names two places for the same media
/// (docs/CONFORMANCE.md, "Same-id Representations").
@Suite("Conformance: the same Representation in two AdaptationSets", .timeLimit(.minutes(1)))
struct SameIdRepresentationTests {
    @Test func aSegmentMissingOnTheFirstSetsCDNIsReadFromTheSecond() async throws {
        // The first CDN refuses its third media request (a segment), once.
        let first = try DASHCopyTests.CDN(host: "127.0.0.1") { $0 == 3 }
        let second = try DASHCopyTests.CDN(host: "127.0.0.2")
        defer { first.server.stop(); second.server.stop() }
        let origin = try DASHCopyTests.origin("timeline") { text in
            // The tagged audio set, once with the first CDN's BaseURL and again with the second's.
            let start = text.range(of: #"<AdaptationSet id="1""#)!.lowerBound
            let end = text.range(of: "</AdaptationSet>", range: start..<text.endIndex)!.upperBound
            let set = String(text[start..<end])
            func on(_ cdn: DASHCopyTests.CDN, id: String) -> String {
                set.replacingOccurrences(of: #"<AdaptationSet id="1""#, with: #"<AdaptationSet id="\#(id)""#)
                    .replacingOccurrences(of: "<InbandEventStream", with: "<BaseURL>\(cdn.url("timeline/"))</BaseURL><InbandEventStream")
            }
            return text.replacingCharacters(in: start..<end, with: on(first, id: "1") + on(second, id: "2"))
        }
        defer { origin.stop() }
        let mpd = try String(contentsOf: URL(string: origin.url("manifest.mpd"))!, encoding: .utf8)
        #expect(mpd.components(separatedBy: #"<Representation id="1""#).count == 3, "listed twice")
        let events = await Samples.scan(origin.url("manifest.mpd"), fetcher: Fetcher(retry: .none))
        #expect(DASHSampleTests.found(events) == (try DASHSampleTests.planted("timeline")), "every tag, once")
        #expect(events.failures.isEmpty, "\(events.failures)")
        let switched = DASHCopyTests.switches(events)
        #expect(switched.first?.from == first.url("timeline/") && switched.first?.to == second.url("timeline/"), "\(switched)")
        #expect(first.counts.refused == 1)
    }
}
