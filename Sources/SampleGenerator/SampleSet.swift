import Foundation
import ID3Meter

/// Every sample `make samples` writes, each beside the ground truth of the frames in it.
public struct SampleSet {
    public var output: URL
    /// Base audio/video TS files (made by the ffmpeg CLI) that the libavformat samples remux.
    public var longBase: String
    public var shortBase: String

    private static let basePTS: Int64 = 126_000  // where ffmpeg's TS muxer starts (1.4 s)
    private static let programDate = Date(timeIntervalSince1970: 1_795_000_000)

    public init(output: URL, longBase: String, shortBase: String) {
        self.output = output
        self.longBase = longBase
        self.shortBase = shortBase
    }

    public func writeAll() throws {
        try writeLibAVFiles()
        try writeLibAVHLS()
        try writeSpecFiles()
        try writeSpecHLS()
        try writeQASample()
        try writeQuirks()
        try writeRenditions()
    }

    /// Master playlists whose tags ride in an audio rendition (EXT-X-MEDIA TYPE=AUDIO), over
    /// the media of other samples: one where only the rendition carries ID3 (a video variant
    /// without, the packed AAC sample as the audio), one where variant and DEFAULT rendition
    /// carry the same tags (each must be reported once).
    private func writeRenditions() throws {
        let folder = try directory("renditions")
        try HLSWriter.mediaPlaylist([HLSWriter.Entry(uri: "../ts/no-id3.ts", duration: 2)])
            .write(to: folder.appendingPathComponent("video.m3u8"), atomically: true, encoding: .utf8)
        func master(variant: String, renditions: [(name: String, uri: String, isDefault: Bool)]) -> String {
            (["#EXTM3U", "#EXT-X-VERSION:4"]
                + renditions.map { rendition in
                    "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"\(rendition.name)\",DEFAULT=\(rendition.isDefault ? "YES" : "NO"),"
                        + "AUTOSELECT=YES,URI=\"\(rendition.uri)\""
                }
                + ["#EXT-X-STREAM-INF:BANDWIDTH=300000,FRAME-RATE=29.970,AUDIO=\"audio\"", variant]).joined(separator: "\n") + "\n"
        }
        try master(variant: "video.m3u8", renditions: [("English", "../packed/aac/index.m3u8", true)])
            .write(to: folder.appendingPathComponent("audio-carries.m3u8"), atomically: true, encoding: .utf8)
        try master(variant: "../spec/hls/index.m3u8", renditions: [("Other", "../packed/mp3/index.m3u8", false),
                                                                   ("Main", "../spec/hls/index.m3u8", true)])
            .write(to: folder.appendingPathComponent("both-carry.m3u8"), atomically: true, encoding: .utf8)
    }

    /// MPEG-TS quirks (see `TransportStreamQuirks`): a file, and an HLS VOD whose tags cross
    /// segment boundaries.
    private func writeQuirks() throws {
        let folder = try directory("quirks")
        let file = TransportStreamQuirks.file()
        try Data(file.bytes).write(to: folder.appendingPathComponent("quirks.ts"))
        try writeExpected(file.expected, to: folder.appendingPathComponent("quirks.expected.jsonl"))
        let hls = try directory("quirks/hls")
        let cut = TransportStreamQuirks.segments()
        for (index, segment) in cut.segments.enumerated() {
            try Data(segment).write(to: hls.appendingPathComponent("seg\(index).ts"))
        }
        let entries = cut.segments.indices.map { HLSWriter.Entry(uri: "seg\($0).ts", duration: 10) }
        try HLSWriter.mediaPlaylist(entries).write(to: hls.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        try writeExpected(cut.expected, to: hls.appendingPathComponent("expected.jsonl"))
    }

    /// One of each defect the QA report finds, beside the list of where they were planted.
    private func writeQASample() throws {
        let folder = try directory("qa")
        let (bytes, defects) = PlantedDefects.stream()
        try Data(bytes).write(to: folder.appendingPathComponent("defects.ts"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(defects).write(to: folder.appendingPathComponent("defects.planted.json"))
    }

    /// TS files through libavformat's muxer: the standard mix, v2.3 and unsynchronised tags.
    private func writeLibAVFiles() throws {
        let folder = try directory("ts")
        for (flavour, base, duration, name) in [(TagSchedule.Flavour.standard, longBase, 40.0, "nielsen"),
                                                (.v23, shortBase, 20.0, "nielsen-v23"),
                                                (.unsync, shortBase, 20.0, "nielsen-unsync")] {
            let schedule = TagSchedule(flavour: flavour, startPTS: Self.basePTS, duration: duration, seed: 7)
            try LibAVRemuxer(basePath: base).write(schedule.packets) { _ in folder.appendingPathComponent("\(name).ts").path }
            try writeExpected(schedule.expectedFrames(), to: folder.appendingPathComponent("\(name).expected.jsonl"))
        }
    }

    /// An HLS VOD through libavformat's muxer: a master playlist with two variants carrying
    /// the same tags, the higher one AES-128 encrypted, PROGRAM-DATE-TIME on every segment.
    private func writeLibAVHLS() throws {
        let folder = try directory("hls")
        let schedule = TagSchedule(flavour: .standard, startPTS: Self.basePTS, duration: 40, seed: 11)
        let key = Array("id3-meter-sample".utf8)
        var starts: [Int64] = []
        for variant in ["low", "high"] {
            let variantFolder = try directory("hls/\(variant)")
            starts = try LibAVRemuxer(basePath: longBase).write(schedule.packets, segmentDuration: 6) {
                variantFolder.appendingPathComponent("seg\($0).ts").path
            }
            let entries = segmentEntries(starts: starts, endPTS: Self.basePTS + 40 * 90_000, name: { "seg\($0).ts" })
            if variant == "high" {
                for (index, entry) in entries.enumerated() {
                    let file = variantFolder.appendingPathComponent(entry.uri)
                    let plain = try [UInt8](Data(contentsOf: file))
                    try Data(HLSWriter.encrypt(plain, key: key, mediaSequence: index)).write(to: file)
                }
                try Data(key).write(to: variantFolder.appendingPathComponent("key.bin"))
            }
            try HLSWriter.mediaPlaylist(entries, keyURI: variant == "high" ? "key.bin" : nil)
                .write(to: variantFolder.appendingPathComponent("\(variant).m3u8"), atomically: true, encoding: .utf8)
        }
        try HLSWriter.masterPlaylist([("high/high.m3u8", 400_000, "29.970"), ("low/low.m3u8", 150_000, "29.970")])
            .write(to: folder.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        try writeExpected(schedule.expectedFrames { pts in "seg\(starts.lastIndex { $0 <= pts } ?? 0).ts" },
                          to: folder.appendingPathComponent("expected.jsonl"))
    }

    /// TS files from the independent spec writer: tags cut into 60-byte TS payloads, v2.3, unsynchronised.
    private func writeSpecFiles() throws {
        let folder = try directory("spec")
        for (flavour, payload, name) in [(TagSchedule.Flavour.standard, 60, "standard-60"),
                                         (.v23, 184, "v23-184"), (.unsync, 60, "unsync-60")] {
            let schedule = TagSchedule(flavour: flavour, startPTS: 900_000, duration: 40, seed: 23)
            var writer = TransportStreamWriter(payloadPerPacket: payload)
            var bytes = writer.programTables()
            for packet in schedule.packets { bytes += writer.pes(pts: packet.pts, payload: packet.bytes) }
            try Data(bytes).write(to: folder.appendingPathComponent("\(name).ts"))
            try writeExpected(schedule.expectedFrames(), to: folder.appendingPathComponent("\(name).expected.jsonl"))
        }
    }

    /// A spec-writer HLS VOD of three 10 s segments, the third after a discontinuity whose PTS jump back.
    private func writeSpecHLS() throws {
        let folder = try directory("spec/hls")
        let startPTS: [Int64] = [900_000, 1_800_000, 180_000]
        var expected: [ExpectedFrame] = []
        var entries: [HLSWriter.Entry] = []
        for (index, start) in startPTS.enumerated() {
            let schedule = TagSchedule(flavour: .standard, startPTS: start, duration: 10, seed: 31 + UInt64(index))
            var writer = TransportStreamWriter()
            var bytes = writer.programTables()
            for packet in schedule.packets { bytes += writer.pes(pts: packet.pts, payload: packet.bytes) }
            let name = "part\(index).ts"
            try Data(bytes).write(to: folder.appendingPathComponent(name))
            expected += schedule.expectedFrames { _ in name }
            entries.append(HLSWriter.Entry(uri: name, duration: 10, programDateTime: Self.programDate.addingTimeInterval(Double(index) * 10),
                                           discontinuity: index == 2))
        }
        try HLSWriter.mediaPlaylist(entries).write(to: folder.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        try writeExpected(expected, to: folder.appendingPathComponent("expected.jsonl"))
    }

    private func segmentEntries(starts: [Int64], endPTS: Int64, name: (Int) -> String) -> [HLSWriter.Entry] {
        starts.enumerated().map { index, start in
            let end = index + 1 < starts.count ? starts[index + 1] : min(endPTS, start + 6 * 90_000)
            return HLSWriter.Entry(uri: name(index), duration: Double(end - start) / 90_000,
                                   programDateTime: Self.programDate.addingTimeInterval(Double(start - starts[0]) / 90_000))
        }
    }

    private func directory(_ path: String) throws -> URL {
        let url = output.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func writeExpected(_ frames: [ExpectedFrame], to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let lines = try frames.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    }
}
