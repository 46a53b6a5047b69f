import Foundation
import ID3Meter

/// fMP4/CMAF HLS with ID3 in `emsg` boxes. The media (init.mp4, seg*.m4s, index.m3u8) is the
/// ffmpeg CLI's HLS muxer output; each segment's earliest decode time comes from ffprobe
/// (`seg*.csv`: the first `stream_index,dts` per stream with edit lists ignored; `init.tb`:
/// the time bases), never from id3-meter's box reader. Into each segment, before its `sidx`
/// and `moof` (so no offset changes), go: a Nielsen tag in a version 1 emsg (Nielsen's
/// scheme, absolute time), a Nielsen tag in a version 0 emsg (AOM's scheme, a delta in ms),
/// another ID3 tag, and a SCTE-35 emsg that is not ID3 and must be left alone.
public struct FragmentedMP4Samples {
    public var media: URL
    public var output: URL

    public init(media: URL, output: URL) {
        self.media = media
        self.output = output
    }

    public func write() throws {
        let folder = output.appendingPathComponent("fmp4")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let timeBases = try lines(media.appendingPathComponent("init.tb")).map { line in
            line.split(separator: "/").compactMap { Int64($0) }
        }
        var factory = NielsenTagFactory(seed: 71)
        var expected: [ExpectedFrame] = []
        let segments = try FileManager.default.contentsOfDirectory(atPath: media.path)
            .filter { $0.hasSuffix(".m4s") }.sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count }
        for (index, name) in segments.enumerated() {
            let earliest = try lines(media.appendingPathComponent(name.replacingOccurrences(of: ".m4s", with: ".csv")))
                .compactMap { line -> Int64? in
                    let fields = line.split(separator: ",").compactMap { Int64($0) }
                    guard fields.count == 2, fields[0] < timeBases.count, timeBases[Int(fields[0])].count == 2 else { return nil }
                    let base = timeBases[Int(fields[0])]
                    return fields[1] * 90_000 * base[0] / base[1]
                }.min() ?? 0
            let second = 36_000 + index * 6
            let absolute = ID3TagSpec(version: .v2_4, frames: [.priv(owner: factory.owner(secondsIntoDay: second), data: [0x41])],
                                      extraFlags: 0x20)
            let delta = ID3TagSpec(version: .v2_3, frames: [.priv(owner: factory.owner(secondsIntoDay: second + 2), data: [0x41])])
            let other = ID3TagSpec(version: .v2_4, frames: [.txxx(description: "ad-break", value: "segment \(index)")])
            let apple = ID3TagSpec(version: .v2_4, frames: [.priv(owner: factory.owner(secondsIntoDay: second + 5), data: [0x41])])
            let boxes = Self.emsg(version: 1, scheme: "www.nielsen.com:id3:v1", value: "1", timescale: 90_000,
                                  time: Int(earliest + 45_000), id: index * 10, data: absolute.bytes())
                + Self.emsg(version: 0, scheme: "https://aomedia.org/emsg/ID3", value: "", timescale: 1_000,
                            time: 2_000, id: index * 10 + 1, data: delta.bytes())
                + Self.emsg(version: 0, scheme: "https://aomedia.org/emsg/ID3", value: "", timescale: 1_000,
                            time: 4_000, id: index * 10 + 2, data: other.bytes())
                + Self.emsg(version: 0, scheme: "urn:scte:scte35:2013:bin", value: "", timescale: 1_000,
                            time: 0, id: index * 10 + 3, data: Array("ID3 look-alike that is SCTE-35".utf8))
                + Self.emsg(version: 1, scheme: "https://developer.apple.com/streaming/emsg-id3", value: "", timescale: 90_000,
                            time: Int(earliest + 450_000), id: index * 10 + 4, data: apple.bytes())
            var bytes = [UInt8](try Data(contentsOf: media.appendingPathComponent(name)))
            bytes.insert(contentsOf: boxes, at: Self.afterSegmentType(bytes))
            try Data(bytes).write(to: folder.appendingPathComponent(name))
            for (tag, pts) in [(absolute, earliest + 45_000), (delta, earliest + 180_000), (other, earliest + 360_000),
                               (apple, earliest + 450_000)] {
                expected += TagSchedule(packets: [ScheduledPacket(pts: pts & (PTS.wrap - 1), tags: [tag])]).expectedFrames { _ in name }
            }
        }
        for file in ["init.mp4", "index.m3u8"] {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(file))
            try FileManager.default.copyItem(at: media.appendingPathComponent(file), to: folder.appendingPathComponent(file))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = try expected.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n") + "\n"
        try text.write(to: folder.appendingPathComponent("expected.jsonl"), atomically: true, encoding: .utf8)
    }

    private func lines(_ url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Where the first box after a leading `styp` starts.
    public static func afterSegmentType(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 8, String(decoding: bytes[4..<8], as: UTF8.self) == "styp" else { return 0 }
        return bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
    }

    /// An `emsg` box (ISO/IEC 23009-1 §5.10.3.3): version 0 takes `time` as the delta,
    /// version 1 as the presentation time.
    public static func emsg(version: UInt8, scheme: String, value: String, timescale: Int, time: Int, id: Int, data: [UInt8]) -> [UInt8] {
        func be(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        let strings = Array(scheme.utf8) + [0] + Array(value.utf8) + [0]
        let fields = version == 0
            ? strings + be(timescale, 4) + be(time, 4) + be(0, 4) + be(id, 4)
            : be(timescale, 4) + be(time, 8) + be(0, 4) + be(id, 4) + strings
        let body = [version, 0, 0, 0] + fields + data
        return be(8 + body.count, 4) + Array("emsg".utf8) + body
    }
}
