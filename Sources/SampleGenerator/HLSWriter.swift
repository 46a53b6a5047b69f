import CID3MeterShim
import Foundation
import ID3Meter

/// Writes HLS playlists for generated segments, and encrypts segments the way an
/// AES-128 packager does (RFC 8216 §5.2: PKCS7 padding, CBC, IV from the media sequence).
public enum HLSWriter {
    public struct Entry {
        public var uri: String
        public var duration: Double
        public var programDateTime: Date?
        public var discontinuity = false

        public init(uri: String, duration: Double, programDateTime: Date? = nil, discontinuity: Bool = false) {
            self.uri = uri
            self.duration = duration
            self.programDateTime = programDateTime
            self.discontinuity = discontinuity
        }
    }

    public static func mediaPlaylist(_ entries: [Entry], keyURI: String? = nil) -> String {
        let target = Int((entries.map(\.duration).max() ?? 1).rounded(.up))
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:\(target)",
                     "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD"]
        if let keyURI { lines.append("#EXT-X-KEY:METHOD=AES-128,URI=\"\(keyURI)\"") }
        for entry in entries {
            if entry.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            if let date = entry.programDateTime { lines.append("#EXT-X-PROGRAM-DATE-TIME:\(ProgramDateTime.format(date))") }
            lines.append(String(format: "#EXTINF:%.3f,", entry.duration))
            lines.append(entry.uri)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    public static func masterPlaylist(_ variants: [(uri: String, bandwidth: Int, frameRate: String)]) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3"]
        for variant in variants {
            lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(variant.bandwidth),RESOLUTION=160x90,FRAME-RATE=\(variant.frameRate),CODECS=\"mp4a.40.2\"")
            lines.append(variant.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    public static func encrypt(_ bytes: [UInt8], key: [UInt8], mediaSequence: Int) -> [UInt8] {
        let padding = 16 - bytes.count % 16
        var data = bytes + [UInt8](repeating: UInt8(padding), count: padding)
        var iv = SegmentLoader.sequenceIV(mediaSequence)
        _ = idm_aes128_cbc(&data, data.count, key, &iv, 0)
        return data
    }
}
