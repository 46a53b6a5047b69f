import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// An `availabilityTimeOffset` longer than the segment: the segment is out before it starts.
/// Media3 (a segment available from its end minus the offset, with no floor at its start) and
/// shaka-player read it so and fetch it then (docs/CONFORMANCE.md).
@Suite("Conformance: an availabilityTimeOffset longer than the segment", .serialized, .timeLimit(.minutes(1)))
struct AvailabilityTimeOffsetTests {
    /// 1 s segments out 1.5 s before their end (0.75 s on the template, 0.75 s on the BaseURL),
    /// read 1.7 s into the stream: the third segment, which starts at 2 s, is out since 1.5 s.
    @Test func aSegmentOutBeforeItStartsIsRead() async throws {
        let server = try LiveDASHTests.early(by: 1.5, preroll: 1.7, count: 8)
        defer { server.stop() }
        let events = await Samples.scan(server.url)
        let stream = try #require(server.stream)
        let read = try #require(server.server.requests.last?.receivedAt.timeIntervalSince(stream.schedule.startDate))
        try #require(read < 2.5, "read within 0.8 s of the first request (\(read) s), before the fourth segment is out")
        #expect(server.segmentsAsked == [0, 1, 2], "\(server.server.requests.map(\.path))")
        #expect(events.failures.isEmpty, "\(events.failures)")
        #expect(events.tags.flatMap(\.nielsenTags).map(\.payload) == (0..<3).flatMap { stream.schedule.tags(inSegment: $0).map(\.owner) })
    }
}
