import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// MPEG-TS as muxers in the field write it (samples/quirks, from `TransportStreamQuirks`):
/// every tag the generator wrote, at the time a player gives it.
@Suite("MPEG-TS quirks")
struct TransportStreamQuirksTests {
    static func bytes(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: Samples.path(relative))))
    }

    @Test func undeclaredPIDJoinedPESInheritedPTSAndASecondPID() async throws {
        let events = await Samples.scan(Samples.path("quirks/quirks.ts"))
        #expect(events.failures.isEmpty)
        #expect(events.malformed == [])
        let expected = try Samples.expected("quirks/quirks.expected.jsonl")
        #expect(events.frames() == expected.map(FoundFrame.init))
        // The first PID's tags, and only they, say how they were carried: each is joined or inherits its PTS.
        let joined = "tag joined from 2 PES packets"
        let inherited = "PES without PTS: time taken from the previous PES on PID 0x0102"
        let undeclared = "timed-ID3 PID 0x0102 has no metadata descriptor in the PMT"
        let firstPID = events.tags.filter { $0.tag.notes.contains(joined) || $0.tag.notes.contains(inherited) }
        #expect(firstPID.filter { $0.tag.notes.contains(joined) }.count == 4, "its Nielsen tags, split over two PES")
        #expect(firstPID.count > 4, "its other tags, in PES without a PTS")
        #expect(firstPID.allSatisfy { $0.tag.notes.contains(undeclared) })
        #expect(events.tags.filter { $0.tag.notes.contains(undeclared) }.count == firstPID.count)
    }

    /// Why the demuxing is done in Swift: libavformat 5.1 makes no stream of the PID without a descriptor.
    @Test func libavformatSeesOnlyTheDeclaredPID() throws {
        let streams = try StreamProbe.streams(in: Self.bytes("quirks/quirks.ts"))
        #expect(streams.filter(\.isTimedID3).count == 1)
    }

    @Test func tagsCutBySegmentBoundariesAreJoinedAndBelongWhereTheyStart() async throws {
        let events = await Samples.scan(Samples.path("quirks/hls/index.m3u8"))
        #expect(events.failures.isEmpty)
        #expect(events.malformed == [])
        let expected = try Samples.expected("quirks/hls/expected.jsonl")
        #expect(events.frames(segmentNames: true) == expected.map(FoundFrame.init))
    }

    /// A segment read on its own has half a tag at its edge: said so, never passed off as whole,
    /// and not an error (nothing was damaged; the bytes end there).
    @Test func aSegmentAloneReportsItsCutTag() async throws {
        let events = await Samples.scan(Samples.path("quirks/hls/seg0.ts"))
        let expected = try Samples.expected("quirks/hls/expected.jsonl").filter { $0.segment == "seg0.ts" }
        #expect(events.frames().count == expected.count - 1)
        #expect(events.failures.isEmpty)
        #expect(events.warnings.contains { if case .damage(.endsInsidePES) = $0.kind { true } else { false } }, "\(events.warnings)")
        #expect(events.malformed.count == 1, "the cut tag")
    }

    /// Bytes arriving in pieces of any size (a UDP stream, a file read in chunks) demux alike.
    @Test(arguments: ["quirks/quirks.ts", "spec/standard-60.ts", "ts/nielsen.ts"])
    func piecesOfAnySizeDemuxLikeTheWhole(sample: String) throws {
        let bytes = try Self.bytes(sample)
        func demux(pieces: [Int]) -> [String] {
            var demuxer = TimedID3Demuxer()
            var found: [String] = []
            func record(_ event: TimedID3Demuxer.Event) {
                if case .packet(let packet) = event { found.append("\(packet.pts ?? -1) \(packet.bytes) \(packet.notes)") }
                else { found.append("\(event)") }
            }
            var buffer: [UInt8] = []
            var offset = 0
            for (index, size) in pieces.enumerated() {
                buffer += bytes[offset..<min(bytes.count, offset + size)]
                offset = min(bytes.count, offset + size)
                let isFinal = index == pieces.count - 1
                let used = buffer.withUnsafeBufferPointer { demuxer.demux($0, at: 0, isFinal: isFinal, emit: record) }
                buffer.removeFirst(used)
            }
            demuxer.flush(emit: record)
            return found
        }
        let whole = demux(pieces: [bytes.count])
        var random = SeededRandom(seed: 17)
        var pieces: [Int] = []
        while pieces.reduce(0, +) < bytes.count { pieces.append(Int.random(in: 1...5_000, using: &random)) }
        #expect(!whole.isEmpty)
        #expect(demux(pieces: pieces) == whole)
    }

    @Test func theMeterDeliversEveryNielsenTagOfTheQuirks() throws {
        let server = try LocalHTTPServer(serving: Samples.folder)
        defer { server.stop() }
        for (input, truth) in [(Samples.path("quirks/quirks.ts"), "quirks/quirks.expected.jsonl"),
                               (server.url("quirks/hls/index.m3u8"), "quirks/hls/expected.jsonl")] {
            let run = try Command.run(["--speed", "max", "--fps", "30", "--format", "jsonl", input])
            #expect(run.status == 0, "\(run.stderr)")
            let expected = try Samples.expected(truth).filter(\.nielsen).sorted { $0.pts < $1.pts }
            #expect(run.sends == expected.map(Command.Send.init), "\(input)")
        }
    }
}
