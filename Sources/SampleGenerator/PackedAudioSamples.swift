import Foundation
import ID3Meter

/// Packed audio HLS (AAC/ADTS, MP3, AC-3, E-AC-3 without a container) from elementary streams
/// the ffmpeg CLI encoded. Frame boundaries and times come from `ffprobe -show_packets` (files
/// `tone.FORMAT.csv`: pts,size,pos; `tone.FORMAT.tb`: the time base), never from id3-meter's
/// own frame parser, so the ground truth stays independent of it.
public struct PackedAudioSamples {
    public static let formats = [("adts", "aac"), ("mp3", "mp3"), ("ac3", "ac3"), ("eac3", "ec3")]
    static let basePTS: Int64 = 900_000

    public var audio: URL
    public var output: URL

    public init(audio: URL, output: URL) {
        self.audio = audio
        self.output = output
    }

    public func write() throws {
        for (format, fileExtension) in Self.formats {
            try write(format: format, fileExtension: fileExtension)
        }
    }

    private struct Packet { var pts: Int64; var size: Int; var position: Int }

    private func write(format: String, fileExtension: String) throws {
        let stream = [UInt8](try Data(contentsOf: audio.appendingPathComponent("tone.\(format)")))
        let packets = try String(contentsOf: audio.appendingPathComponent("tone.\(format).csv"), encoding: .utf8)
            .split(separator: "\n").compactMap { line -> Packet? in
                let fields = line.split(separator: ",").compactMap { Int64($0) }
                return fields.count >= 3 ? Packet(pts: fields[0], size: Int(fields[1]), position: Int(fields[2])) : nil
            }
        let timeBase = try String(contentsOf: audio.appendingPathComponent("tone.\(format).tb"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "/").compactMap { Int64($0) }
        guard timeBase.count == 2, packets.count >= 6 else { throw CocoaError(.fileReadCorruptFile) }
        func ticks(_ packet: Packet) -> Int64 { Self.basePTS + packet.pts * 90_000 * timeBase[0] / timeBase[1] }

        let folder = output.appendingPathComponent("packed/\(fileExtension)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var factory = NielsenTagFactory(seed: 61)
        var expected: [ExpectedFrame] = []
        var entries: [HLSWriter.Entry] = []
        let perSegment = packets.count / 3
        for segment in 0..<3 {
            let first = segment * perSegment, middle = first + perSegment / 2
            let end = segment == 2 ? packets.count : first + perSegment
            let name = "seg\(segment).\(fileExtension)"
            let opening = ID3TagSpec(frames: [.transportStreamTimestamp(ticks(packets[first])),
                                              .priv(owner: factory.owner(secondsIntoDay: 500 + segment * 10), data: [0x41])])
            let inside = ID3TagSpec(version: .v2_3, frames: [.priv(owner: factory.owner(secondsIntoDay: 505 + segment * 10), data: [0x41]),
                                                             .txxx(description: "segment", value: "\(segment)")])
            var bytes = opening.bytes()
            for index in first..<end {
                if index == middle { bytes += inside.bytes() }
                bytes += stream[packets[index].position..<packets[index].position + packets[index].size]
            }
            try Data(bytes).write(to: folder.appendingPathComponent(name))
            for (tag, packet) in [(opening, packets[first]), (inside, packets[middle])] {
                expected += TagSchedule(packets: [ScheduledPacket(pts: PTS.asCarried(ticks(packet)), tags: [tag])])
                    .expectedFrames { _ in name }
            }
            let duration = Double((end < packets.count ? packets[end].pts : packets[end - 1].pts + (packets[1].pts - packets[0].pts))
                                  - packets[first].pts) * Double(timeBase[0]) / Double(timeBase[1])
            entries.append(HLSWriter.Entry(uri: name, duration: duration))
        }
        try HLSWriter.mediaPlaylist(entries).write(to: folder.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try (expected.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n") + "\n")
            .write(to: folder.appendingPathComponent("expected.jsonl"), atomically: true, encoding: .utf8)
    }
}
