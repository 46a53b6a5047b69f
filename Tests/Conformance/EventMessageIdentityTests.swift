import Foundation
import Testing
@testable import ID3MeterCore
import SampleGenerator

/// Which `emsg` boxes are one event (docs/CONFORMANCE.md, "emsg identity").
///
/// shaka-player: its HLS SAMPLE-AES test asset (test/test/assets/hls-sample-aes, as added
/// 2024-02 for hls_parser_integration.js "supports SAMPLE-AES identity streaming") carries one
/// version 1 box in each of four segments: AOM's ID3 scheme, value "", id 1, the same 365-byte
/// ID3 message, at 10.000, 15.995, 21.989 and 27.984 s, each 44 ms after its segment's start.
/// shaka's region timeline keys an event by scheme, id, start and end
/// (lib/media/region_timeline.js), so they are four events. A packager's repeat of one event
/// states the same time again, and is one (dash.js and ISO/IEC 23009-1 §5.10.3.3: same scheme,
/// value and id).
@Suite("Conformance: emsg identity")
struct EventMessageIdentityTests {
    static let owner = "www.nielsen.com/conformance/one-id-one-message"

    /// The ffmpeg-made fMP4 sample (samples/fmp4) with, before each segment's `moof`, the
    /// shaka-like box at its segment's start plus 44 ms, and with `repeating` the box of the
    /// segment before it too, as a packager repeats an event its segment spans.
    static func stream(repeating: Bool) throws -> (playlist: String, times: [Int]) {
        let sample = Samples.folder.appendingPathComponent("fmp4")
        let folder = try Samples.temporaryFolder()
        for name in ["index.m3u8", "init.mp4"] {
            try FileManager.default.copyItem(at: sample.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        let message = ID3Bytes.tag(version: 4, body: ID3Bytes.v24Frame("PRIV", Array(owner.utf8) + [0]))
        // Segments start at 0, 6.006 and 12.012 s (the playlist's EXTINFs); 44 ms in, in 90 kHz.
        let times = [0, 540_540, 1_081_080].map { $0 + 3_960 }
        func box(_ index: Int) -> [UInt8] {
            FragmentedMP4Samples.emsg(version: 1, scheme: "https://aomedia.org/emsg/ID3", value: "", timescale: 90_000,
                                      time: times[index], id: 1, data: message)
        }
        for index in 0..<3 {
            let name = "seg\(index).m4s"
            let bytes = Array(try Data(contentsOf: sample.appendingPathComponent(name)))
            let place = FragmentedMP4Samples.afterSegmentType(bytes)
            let boxes = (repeating && index > 0 ? box(index - 1) : []) + box(index)
            try Data(Array(bytes[..<place]) + boxes + Array(bytes[place...])).write(to: folder.appendingPathComponent(name))
        }
        return (folder.appendingPathComponent("index.m3u8").path, times)
    }

    static func planted(_ playlist: String) async -> [Int64?] {
        let events = await Samples.scan(playlist)
        return events.tags.filter { $0.nielsenTags.first?.payload == owner }.map(\.pts)
    }

    @Test func boxesOfOneIdAndMessageAtOtherTimesAreOtherEvents() async throws {
        let (playlist, times) = try Self.stream(repeating: false)
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: playlist).deletingLastPathComponent().path) }
        #expect(await Self.planted(playlist) == times.map { Int64($0) }, "shaka dispatches each: one a segment, at its time")
    }

    @Test func aBoxRepeatedInTheNextSegmentAtItsTimeIsOneEvent() async throws {
        let (playlist, times) = try Self.stream(repeating: true)
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: playlist).deletingLastPathComponent().path) }
        #expect(await Self.planted(playlist) == times.map { Int64($0) }, "each event once, at its first box")
    }
}
