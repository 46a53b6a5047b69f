import Foundation
import ID3Meter

/// Starting inputs for the fuzzers, from what the samples are made of: every scheduled ID3
/// packet whole and as FFmpeg 5.1 cuts it, Nielsen owner strings, the sample playlists, the
/// packed audio segments, fMP4 init and media segment openings (emsg), and MPEG-TS samples in
/// pieces the fuzzer's length limit takes whole.
public enum FuzzSeeds {
    public static func write(to output: URL, samples: URL) throws {
        let manager = FileManager.default
        for folder in ["id3", "nielsen", "playlist", "reference", "steering", "packed", "emsg", "ts", "segments", "mpd", "options"] {
            try manager.createDirectory(at: output.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        // Set-Cookie values, compressed bodies, asset lists, record lines and stored hours start from the hand-made regressions.
        let regressions = samples.deletingLastPathComponent().appendingPathComponent("fuzz/regressions")
        for folder in ["cookies", "inflate", "assetlist", "records", "hours"] {
            try manager.createDirectory(at: output.appendingPathComponent(folder), withIntermediateDirectories: true)
            for name in (try? manager.contentsOfDirectory(atPath: regressions.appendingPathComponent(folder).path)) ?? [] {
                try manager.copyItem(at: regressions.appendingPathComponent("\(folder)/\(name)"), to: output.appendingPathComponent("\(folder)/\(name)"))
            }
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
            try manager.copyItem(at: playlist, to: output.appendingPathComponent("reference/\(number).m3u8"))
        }
        let manifests = manager.enumerator(at: samples, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "mpd" } ?? []
        for (number, manifest) in manifests.enumerated() {
            try manager.copyItem(at: manifest, to: output.appendingPathComponent("mpd/\(number).mpd"))
        }
        for (number, reference) in hostileReferences.enumerated() {
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-KEY:METHOD=AES-128,URI=\"\(reference)\"\n"
                + "#EXT-X-MAP:URI=\"\(reference)\"\n#EXTINF:6,\n\(reference)\n#EXTINF:6,\n../b/seg.ts\n"
            try Data(text.utf8).write(to: output.appendingPathComponent("reference/hostile-\(number).m3u8"))
            let master = "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x\",URI=\"\(reference)\"\n"
                + "#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"a\",FRAME-RATE=inf\n\(reference)\n"
            try Data(master.utf8).write(to: output.appendingPathComponent("reference/hostile-master-\(number).m3u8"))
        }
        for (number, manifest) in steeringManifests.enumerated() {
            try Data(manifest.utf8).write(to: output.appendingPathComponent("steering/\(number).json"))
        }
        for (number, values) in optionValues.enumerated() {
            try Data(values.joined(separator: "\0").utf8).write(to: output.appendingPathComponent("options/\(number).bin"))
        }
        let packed = manager.enumerator(at: samples.appendingPathComponent("packed"), includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent.hasPrefix("seg") } ?? []
        for (number, segment) in packed.enumerated() {
            try manager.copyItem(at: segment, to: output.appendingPathComponent("packed/\(number).bin"))
        }
        let fmp4 = samples.appendingPathComponent("fmp4")
        let initSegment = try Data(contentsOf: fmp4.appendingPathComponent("init.mp4"))
        for number in 0..<3 {
            let segment = try Data(contentsOf: fmp4.appendingPathComponent("seg\(number).m4s"))
            try (initSegment + segment.prefix(seedLength - initSegment.count)).write(to: output.appendingPathComponent("emsg/\(number)-whole.bin"))
            try segment.prefix(seedLength / 2).write(to: output.appendingPathComponent("emsg/\(number)-segment.bin"))
        }
        for sample in ["quirks/quirks.ts", "quirks/hls/seg0.ts", "quirks/hls/seg1.ts", "spec/standard-60.ts", "qa/defects.ts"] {
            let bytes = try Data(contentsOf: samples.appendingPathComponent(sample))
            let pieceLength = seedLength / 188 * 188
            for (number, start) in stride(from: 0, to: min(bytes.count, 8 * pieceLength), by: pieceLength).enumerated() {
                // The segmented reader takes the same MPEG-TS, cut into segments of its own.
                for folder in ["ts", "segments"] {
                    try bytes[start..<min(bytes.count, start + pieceLength)]
                        .write(to: output.appendingPathComponent("\(folder)/\(sample.replacingOccurrences(of: "/", with: "-"))-\(number).bin"))
                }
            }
        }
    }

    /// Content-steering manifests, as servers write them and as they should not.
    static let steeringManifests = [
        #"{"VERSION":1,"TTL":300,"RELOAD-URI":"https://steer.example/m.json?s=1","PATHWAY-PRIORITY":["CDN-A","CDN-B"]}"#,
        #"{"VERSION":1,"TTL":0,"PATHWAY-PRIORITY":["A"],"PATHWAY-CLONES":[{"BASE-ID":"A","ID":"C","URI-REPLACEMENT":{"HOST":"c.example"}}]}"#,
        #"{"VERSION":2,"TTL":-5,"PATHWAY-PRIORITY":[]}"#,
        #"{"VERSION":1,"TTL":1e308,"PATHWAY-PRIORITY":["A","A","A"],"RELOAD-URI":"file:///etc/passwd"}"#,
    ]

    /// What a hostile playlist points at (issue: untrusted streams).
    static let hostileReferences = [
        "file:///etc/passwd", "file:/etc/passwd", "FILE://localhost/etc/passwd", "concat:/etc/passwd|/etc/hosts",
        "subfile:,,start,0,end,0,,:/etc/passwd", "cache:file:/etc/passwd", "async:file:/etc/passwd", "pipe:0",
        "data:text/plain;base64,AAAA", "tcp://127.0.0.1:1?listen=1", "udp://127.0.0.1:1?localport=2", "http:/etc/passwd",
        "https://", "//other.host/x.ts", "/etc/passwd", "../../../etc/passwd", "hTTp://h/x.ts", "http://[::1]:80/x",
    ]

    /// NUL-separated values for the numeric options, as the options target reads them.
    static let optionValues = [
        ["29.97", "600", "2", "3", "10", "30"], ["inf", "nan", "-1", "0", "1e300", "1e-300"],
        ["300", "0.001", "max", "1000", "86400", "86400"], ["4", "5", "256M", "16M", "16M", "10"],
        ["-0", "+inf", "0x10", "1_000", "99999999999999999999", "1.7976931348623157e308"],
    ]

    /// The fuzzers' -max_len.
    static let seedLength = 8_192
}

private extension ID3FrameSpec {
    var nielsenOwner: String? {
        guard id == "PRIV" else { return nil }
        let owner = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
        return owner.hasPrefix(NielsenTag.ownerPrefix) ? owner : nil
    }
}
