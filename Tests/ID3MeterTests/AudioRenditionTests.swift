import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// Tags in an audio rendition (EXT-X-MEDIA TYPE=AUDIO) rather than, or as well as, the video variant.
@Suite("Audio renditions", .timeLimit(.minutes(3)))
struct AudioRenditionTests {
    @Test func theDefaultRenditionOfTheVariantsGroup() throws {
        let master = try PlaylistParser.parse(String(contentsOfFile: Samples.path("renditions/both-carry.m3u8"), encoding: .utf8),
                                              location: Samples.path("renditions/both-carry.m3u8"))
        guard case .master(let playlist) = master, let variant = playlist.variants.first else { Issue.record("not a master"); return }
        #expect(playlist.audioRendition(for: variant)?.name == "Main")
    }

    @Test func tagsOnlyInTheAudioRenditionAreFound() async throws {
        let events = await Samples.scan(Samples.path("renditions/audio-carries.m3u8"))
        #expect(events.failures.isEmpty)
        let expected = try Samples.expected("packed/aac/expected.jsonl")
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
    }

    @Test func tagsInBothAreReportedOnce() async throws {
        let events = await Samples.scan(Samples.path("renditions/both-carry.m3u8"))
        #expect(events.failures.isEmpty)
        let expected = try Samples.expected("spec/hls/expected.jsonl")
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
    }

    @Test func theMeterFollowsTheRenditionThatCarriesTheTags() throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        for (master, truth) in [("renditions/audio-carries.m3u8", "packed/aac/expected.jsonl"),
                                ("renditions/both-carry.m3u8", "spec/hls/expected.jsonl")] {
            let run = try Command.run(["--speed", "max", "--format", "jsonl", server.url(master)])
            #expect(run.status == 0, "\(run.stderr)")
            let expected = try Samples.expected(truth).filter(\.nielsen).map(Command.Send.init)
            #expect(run.sends == expected, "\(master)")
        }
        // The variant's first segment decides, and is not fetched again to do so.
        let segments = server.requests.map(\.path).filter { $0.hasSuffix(".ts") || $0.hasSuffix(".aac") }
        #expect(!segments.isEmpty && Set(segments).count == segments.count, "\(segments)")
    }
}
