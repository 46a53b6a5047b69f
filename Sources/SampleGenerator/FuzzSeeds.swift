import Foundation
import ID3Meter

/// Starting inputs for the fuzzers, from what the samples are made of: every scheduled ID3
/// packet whole and as FFmpeg 5.1 cuts it, Nielsen owner strings, the sample playlists, and the
/// packed audio segments.
public enum FuzzSeeds {
    public static func write(to output: URL, samples: URL) throws {
        let manager = FileManager.default
        for folder in ["id3", "nielsen", "playlist", "packed"] {
            try manager.createDirectory(at: output.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        var index = 0
        for flavour in TagSchedule.Flavour.allCases {
            for packet in TagSchedule(flavour: flavour, startPTS: 0, duration: 40, seed: 5).packets {
                let bytes = packet.bytes
                try Data(bytes).write(to: output.appendingPathComponent("id3/\(index)-whole.bin"))
                try Data(bytes.dropFirst(5)).write(to: output.appendingPathComponent("id3/\(index)-cut.bin"))
                for owner in packet.tags.flatMap(\.frames).compactMap(\.nielsenOwner) {
                    try Data(owner.utf8.dropFirst(NielsenTag.ownerPrefix.utf8.count))
                        .write(to: output.appendingPathComponent("nielsen/\(index).txt"))
                }
                index += 1
            }
        }
        let playlists = manager.enumerator(at: samples, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "m3u8" } ?? []
        for (number, playlist) in playlists.enumerated() {
            try manager.copyItem(at: playlist, to: output.appendingPathComponent("playlist/\(number).m3u8"))
        }
        let packed = manager.enumerator(at: samples.appendingPathComponent("packed"), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent.hasPrefix("seg") } ?? []
        for (number, segment) in packed.enumerated() {
            try manager.copyItem(at: segment, to: output.appendingPathComponent("packed/\(number).bin"))
        }
    }
}

private extension ID3FrameSpec {
    var nielsenOwner: String? {
        guard id == "PRIV" else { return nil }
        let owner = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
        return owner.hasPrefix(NielsenTag.ownerPrefix) ? owner : nil
    }
}
