import Foundation
import Testing
@testable import ID3MeterCore
import SampleGenerator

/// Which `emsg` boxes are one event (docs/CONFORMANCE.md, "emsg identity").
///
/// shaka-player: its HLS SAMPLE-AES test asset (test/test/assets/hls-sample-aes, as added
/// 2024-02 for hls_parser_integration.js "supports SAMPLE-AES identity streaming") has four
/// segments, each led by one version 1 box: AOM's ID3 scheme, value "", timescale 90 kHz,
/// id 1, event_duration 1, the same 365-byte message (an ID3v2.4 tag of seven text and URL
/// frames, no Nielsen one), at 10.000, 15.99467, 21.98933 and 27.984 s. shaka's region timeline
/// keys an event by scheme, id, start and end (lib/media/region_timeline.js): four events,
/// 28 frames. A packager's repeat of one event states the same time again and is one event
/// (dash.js, and ISO/IEC 23009-1 §5.10.3.3: the same scheme, value and id).
///
/// The asset is shaka's media, not ours: its shape is rebuilt on the ffmpeg-made fMP4 sample
/// (samples/fmp4; its last segment again as the fourth), the boxes and the message our own.
@Suite("Conformance: emsg identity")
struct EventMessageIdentityTests {
    /// The four boxes' times in 90 kHz ticks, as the asset has them.
    static let times = [900_000, 1_439_520, 1_979_040, 2_518_560]

    /// An ID3v2.4 tag of seven frames (language, date, two URLs, copyright, artist, title), our own words.
    static let message: [UInt8] = {
        func text(_ id: String, _ value: String) -> [UInt8] { ID3Bytes.v24Frame(id, [3] + Array(value.utf8)) }
        func url(_ id: String, _ value: String) -> [UInt8] { ID3Bytes.v24Frame(id, Array(value.utf8)) }
        return ID3Bytes.tag(version: 4, body: text("TLAN", "eng") + text("TDRC", "2026-11-28T12:00:00Z") + url("WOAR", "https://example.com/artist")
            + url("WCOM", "https://example.com/buy") + text("TCOP", "2026 id3-meter") + text("TPE1", "id3-meter") + text("TIT2", "Four events"))
    }()

    /// The sample's playlist with a fourth segment, each led by the box at its time; with
    /// `repeating`, each box after the first segment's is the one before it again, then its own.
    static func stream(repeating: Bool) throws -> String {
        let sample = Samples.folder.appendingPathComponent("fmp4")
        let folder = try Samples.temporaryFolder()
        try FileManager.default.copyItem(at: sample.appendingPathComponent("init.mp4"), to: folder.appendingPathComponent("init.mp4"))
        let playlist = try String(contentsOf: sample.appendingPathComponent("index.m3u8"), encoding: .utf8)
            .replacingOccurrences(of: "#EXT-X-ENDLIST", with: "#EXTINF:2.002000,\nseg3.m4s\n#EXT-X-ENDLIST")
        try playlist.write(to: folder.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        func box(_ index: Int) -> [UInt8] {
            FragmentedMP4Samples.emsg(version: 1, scheme: "https://aomedia.org/emsg/ID3", value: "", timescale: 90_000,
                                      time: times[index], id: 1, data: message)
        }
        for (index, source) in ["seg0.m4s", "seg1.m4s", "seg2.m4s", "seg2.m4s"].enumerated() {
            let bytes = Array(try Data(contentsOf: sample.appendingPathComponent(source)))
            let place = FragmentedMP4Samples.afterSegmentType(bytes)
            let boxes = (repeating && index > 0 ? box(index - 1) : []) + box(index)
            try Data(Array(bytes[..<place]) + boxes + Array(bytes[place...])).write(to: folder.appendingPathComponent("seg\(index).m4s"))
        }
        return folder.appendingPathComponent("index.m3u8").path
    }

    /// The events our boxes made: their times and frame counts.
    static func events(_ playlist: String) async -> [(pts: Int64?, frames: Int)] {
        await Samples.scan(playlist).tags.filter { $0.carriage?.stream == "emsg https://aomedia.org/emsg/ID3" && $0.tag.frames.count == 7 }
            .map { ($0.pts, $0.tag.frames.count) }
    }

    @Test func boxesOfOneIdAndMessageAtFourTimesAreFourEvents() async throws {
        let playlist = try Self.stream(repeating: false)
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: playlist).deletingLastPathComponent().path) }
        let found = await Self.events(playlist)
        #expect(found.map(\.pts) == Self.times.map { Int64($0) }, "shaka dispatches each, at its time")
        #expect(found.map(\.frames).reduce(0, +) == 28)
    }

    @Test func aBoxRepeatedInTheNextSegmentAtItsTimeIsOneEvent() async throws {
        let playlist = try Self.stream(repeating: true)
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: playlist).deletingLastPathComponent().path) }
        #expect(await Self.events(playlist).map(\.pts) == Self.times.map { Int64($0) }, "each event once, at its first box")
    }
}
