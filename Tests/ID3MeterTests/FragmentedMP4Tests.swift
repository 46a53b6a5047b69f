import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// fMP4/CMAF from the ffmpeg CLI with emsg boxes put in by the generator; the ground truth's
/// times come from ffprobe's decode times, not from id3-meter's box reader.
@Suite("fMP4 emsg")
struct FragmentedMP4Tests {
    static func file(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: Samples.path("fmp4/\(name)"))))
    }

    @Test func everyID3EmsgOfAnHLSPlaylistWithItsTime() async throws {
        let events = await Samples.scan(Samples.path("fmp4/index.m3u8"))
        #expect(events.failures.isEmpty)
        #expect(events.malformed == [])
        let expected = try Samples.expected("fmp4/expected.jsonl")
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
        #expect(events.tags.first?.carriage?.note == "emsg v1 www.nielsen.com:id3:v1")
    }

    /// Init segment and fragments in one file: the `moov` inside gives the timescales.
    @Test func aWholeFragmentedFile() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let whole = folder.appendingPathComponent("whole.mp4")
        try Data(try ["init.mp4", "seg0.m4s", "seg1.m4s", "seg2.m4s"].flatMap(Self.file)).write(to: whole)
        let events = await Samples.scan(whole.path)
        #expect(events.failures.isEmpty)
        let expected = try Samples.expected("fmp4/expected.jsonl").map { FoundFrame(pts: $0.pts, id: $0.id, label: $0.owner ?? $0.description, segment: nil) }
        #expect(events.frames() == expected)
    }

    /// A media segment without its init segment: version 1 times stand, version 0 ones cannot be known.
    @Test func aLoneSegmentTimesOnlyVersion1() throws {
        var events: [MediaEvent] = []
        var extractor = MediaForm.fragmentedMP4.makeExtractor(origin: TagOrigin(source: "seg1.m4s"))
        extractor.extract(try Self.file("seg1.m4s")) { events.append($0) }
        let expected = try Samples.expected("fmp4/expected.jsonl").filter { $0.segment == "seg1.m4s" }
        #expect(events.tags.map(\.pts) == [expected[0].pts, nil, nil, expected[3].pts])
        #expect(events.tags[3].carriage?.note == "emsg v1 https://developer.apple.com/streaming/emsg-id3")
        #expect(events.tags[1].tag.notes.contains { $0.hasPrefix("no time: the fragment's start is unknown") })
        let warned = events.compactMap { if case .warning(let warning) = $0 { warning.kind } else { nil } }
        #expect(warned.count == 1 && warned.allSatisfy { if case .untimedEventMessages = $0 { true } else { false } }, "said once: \(warned)")
    }

    /// Given the init segment, as a backend that stores it hands it over, every tag has its time.
    @Test func aLoneSegmentWithItsInitSegmentTimesEveryTag() throws {
        var events: [MediaEvent] = []
        var extractor = MediaExtractor(origin: TagOrigin(source: "seg1.m4s"), initSegment: try Self.file("init.mp4"))
        extractor.extract(try Self.file("seg1.m4s")) { events.append($0) }
        let expected = try Samples.expected("fmp4/expected.jsonl").filter { $0.segment == "seg1.m4s" }
        #expect(!expected.isEmpty && events.tags.map(\.pts) == expected.map(\.pts))
        #expect(events.warnings.isEmpty, "\(events.warnings)")
    }

    @Test func initSegmentTimescalesByTrack() throws {
        #expect(TrackTimescales(initSegment: try Self.file("init.mp4")) == TrackTimescales(byTrackID: [1: 30_000, 2: 48_000]))
        #expect(TrackTimescales(initSegment: try Self.file("seg0.m4s")) == nil)
    }

    /// Truncated and damaged boxes: reasons, never a crash; the intact emsg before them survives.
    @Test func damagedBoxes() throws {
        let tag = ID3TagSpec(frames: [.priv(owner: "www.nielsen.com/x", data: [0x41])]).bytes()
        let good = FragmentedMP4Samples.emsg(version: 1, scheme: "www.nielsen.com:id3:v1", value: "1", timescale: 1_000,
                                             time: 2_000, id: 1, data: tag)
        var truncated = FragmentedMP4Samples.emsg(version: 0, scheme: "https://aomedia.org/emsg/ID3", value: "", timescale: 1_000,
                                                  time: 0, id: 2, data: [])
        truncated = Array(truncated.prefix(20))
        truncated.replaceSubrange(0..<4, with: [0, 0, 0, 20])
        let unknownVersion: [UInt8] = [0, 0, 0, 12] + Array("emsg".utf8) + [7, 0, 0, 0]
        let oversized: [UInt8] = [0, 0, 0x10, 0] + Array("emsg".utf8) + [1, 0, 0, 0]
        var events: [MediaEvent] = []
        var extractor = MediaForm.fragmentedMP4.makeExtractor(origin: TagOrigin(source: "x"))
        extractor.extract(good + truncated + unknownVersion + oversized) {
            events.append($0)
        }
        #expect(events.tags.map(\.pts) == [180_000])
        #expect(events.malformed.map(\.reason) == [.emsgTruncated(version: 0), .emsgUnknownVersion(7)])
    }

    @Test func theMeterPlaysEmsgTagsOverHTTP() throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        let run = try Command.run(["--speed", "max", "--fps", "30", "--format", "jsonl", server.url("fmp4/index.m3u8")])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try Samples.expected("fmp4/expected.jsonl").filter(\.nielsen).sorted { $0.pts < $1.pts }
        #expect(run.sends == expected.map(Command.Send.init))
    }

    /// Version 0 messages wait for the next fragment, but not without bound: a run of them with no
    /// moof is handed over as it comes, each tag still delivered once.
    @Test func messagesWithoutAFragmentDoNotPileUp() throws {
        let tag = ID3TagSpec(version: .v2_4, frames: [.priv(owner: "www.nielsen.com/x", data: [1])]).bytes()
        let count = FragmentReader.maximumWaitingMessages + 10
        let bytes = (0..<count).flatMap { id in
            FragmentedMP4Samples.emsg(version: 0, scheme: "https://aomedia.org/emsg/ID3", value: "", timescale: 1_000, time: 0, id: id, data: tag)
        }
        var reader = MediaForm.fragmentedMP4.makeExtractor(origin: TagOrigin(source: "x"))
        var beforeEnd = 0, all = 0
        bytes.withUnsafeBufferPointer { reader.feed($0) { if case .tag = $0 { beforeEnd += 1 } } }
        all = beforeEnd
        reader.finish { if case .tag = $0 { all += 1 } }
        #expect(beforeEnd == FragmentReader.maximumWaitingMessages)
        #expect(all == count)
    }

    /// A Nielsen tag in an emsg box of `id`: `text` makes its payload.
    static func box(id: Int, _ text: String, version: UInt8 = 1, time: Int = 0) -> [UInt8] {
        let priv = Array("www.nielsen.com".utf8) + [0] + Array(text.utf8)
        let tag = ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", priv))
        return FragmentedMP4Samples.emsg(version: version, scheme: "www.nielsen.com:id3:v1", value: "1", timescale: 90_000,
                                         time: time, id: id, data: tag)
    }

    static func payloads(_ bytes: [UInt8]) -> [String] {
        var events: [MediaEvent] = []
        var extractor = MediaForm.fragmentedMP4.makeExtractor(origin: TagOrigin(source: "seg.m4s"))
        extractor.extract(bytes) { events.append($0) }
        return events.tags.compactMap { $0.nielsenTags.first?.payload }
    }

    /// The same box twice (in one segment, or as one file's fragments) is one event; a packager
    /// that gives every event the same id loses none, since each tag's bytes differ; a version 1
    /// box of the same id and bytes at another time is another event (Tests/Conformance).
    @Test func aRepeatedBoxIsOneEventAndAReusedIdIsNot() {
        #expect(Self.payloads(Self.box(id: 7, "a", time: 90_000) + Self.box(id: 7, "a", time: 90_000)) == ["www.nielsen.com"])
        #expect(Self.payloads(Self.box(id: 7, "a") + Self.box(id: 7, "a", time: 90_000)).count == 2)
        #expect(Self.payloads(Self.box(id: 7, "a", version: 0) + Self.box(id: 7, "a", version: 0, time: 90_000)).count == 1,
                "a version 0 repeat cannot state its first time")
        #expect(Self.payloads(Self.box(id: 0, "a") + Self.box(id: 0, "b") + Self.box(id: 0, "c", version: 0)).count == 3)
        #expect(Self.payloads(Self.box(id: 1, "a") + Self.box(id: 2, "a")).count == 2, "another id is another event")
    }

    /// Over weeks the events remembered stay at the bound: the oldest is forgotten first.
    @Test func repeatedEventsAreHeldToTheirBound() {
        var repeats = RepeatedEvents()
        func event(_ id: Int) -> InbandEvent { InbandEvent(scheme: "s", value: "v", id: id, message: [UInt8(id & 0xFF)]) }
        let first = repeats.isRepeat(event(0)), again = repeats.isRepeat(event(0))
        #expect(!first && again)
        let fresh = (1...RepeatedEvents.capacity).filter { !repeats.isRepeat(event($0)) }
        #expect(fresh.count == RepeatedEvents.capacity)
        let newest = repeats.isRepeat(event(RepeatedEvents.capacity)), oldest = repeats.isRepeat(event(0))
        #expect(newest, "the newest is kept")
        #expect(!oldest, "the oldest was forgotten")
        for id in 0..<(100 * RepeatedEvents.capacity) { _ = repeats.isRepeat(event(10_000 + id)) }
        #expect(repeats.count <= RepeatedEvents.capacity && repeats.ordered <= 2 * RepeatedEvents.capacity + 1)
    }
}
