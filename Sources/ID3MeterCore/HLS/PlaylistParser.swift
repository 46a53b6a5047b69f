import Foundation

/// Why a playlist could not be read, with its line number.
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var line: Int?

    public var description: String { line.map { "line \($0): \(reason)" } ?? reason }
}

/// Parses RFC 8216 playlists. URIs come out resolved against the playlist's own location.
public enum PlaylistParser {
    /// Parses a playlist read from `location` (which its relative references are resolved
    /// against), leniently as players do: what is wrong but readable becomes a segment's `note`;
    /// what leaves no playlist to follow throws, with its line.
    public static func parse(_ text: String, location: String) throws(PlaylistError) -> Playlist {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.first?.hasPrefix("#EXTM3U") == true else {
            throw PlaylistError(reason: "not an HLS playlist (no #EXTM3U on the first line)", line: 1)
        }
        if lines.contains(where: { $0.hasPrefix("#EXT-X-STREAM-INF") }) {
            return .master(try parseMaster(lines, location: location))
        }
        return .media(try parseMedia(lines, location: location))
    }

    private static func parseMaster(_ lines: [String], location: String) throws(PlaylistError) -> MasterPlaylist {
        var variants: [Variant] = []
        var renditions: [Rendition] = []
        var pending: (attributes: AttributeList, line: Int)?
        for (index, line) in lines.enumerated() {
            if let value = line.tagValue("#EXT-X-STREAM-INF") {
                pending = (AttributeList(value), index + 1)
            } else if let value = line.tagValue("#EXT-X-MEDIA") {
                let attributes = AttributeList(value)
                renditions.append(Rendition(type: attributes["TYPE"] ?? "", groupID: attributes["GROUP-ID"] ?? "",
                                            name: attributes["NAME"] ?? "",
                                            uri: attributes["URI"].map { Location.resolve($0, against: location) },
                                            isDefault: attributes["DEFAULT"] == "YES"))
            } else if !line.isEmpty, !line.hasPrefix("#"), let (attributes, tagLine) = pending {
                guard let text = attributes["BANDWIDTH"] else {
                    throw PlaylistError(reason: "EXT-X-STREAM-INF without BANDWIDTH", line: tagLine)
                }
                guard let bandwidth = Int(text), bandwidth >= 0 else {
                    let tooLarge = !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber }
                    throw PlaylistError(reason: "EXT-X-STREAM-INF BANDWIDTH '\(text)' " + (tooLarge ? "is too large (over 2^63 - 1)" : "is not a decimal integer"),
                                        line: tagLine)
                }
                variants.append(Variant(uri: Location.resolve(line, against: location), bandwidth: bandwidth,
                                        frameRate: attributes.decimal("FRAME-RATE"), resolution: attributes["RESOLUTION"],
                                        codecs: attributes["CODECS"], audioGroup: attributes["AUDIO"]))
                pending = nil
            }
        }
        return MasterPlaylist(variants: variants, renditions: renditions)
    }

    private static func parseMedia(_ lines: [String], location: String) throws(PlaylistError) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 0, mediaSequence: 0, discontinuitySequence: 0,
                                     hasEndList: false, playlistType: nil, segments: [])
        var extinf: (seconds: Double, line: Int)?
        var discontinuities = 0
        var key: EncryptionKey?
        var mapURI: String?
        var mapByteRange: ByteRange?
        var byteRange: (text: Substring, line: Int)?
        /// Where the last sub-range ended, by resource: a range without an offset follows it.
        var rangeEnds: [String: Int] = [:]
        var programDateTime: Date?
        var nextProgramDateTime: Date?
        for (index, line) in lines.enumerated() {
            let lineNumber = index + 1
            if let value = line.tagValue("#EXT-X-TARGETDURATION") {
                guard let target = Self.seconds(value), target <= Self.maximumTargetDuration else {
                    throw PlaylistError(reason: "bad EXT-X-TARGETDURATION '\(value)' (0 to \(Int(Self.maximumTargetDuration)) s)", line: lineNumber)
                }
                playlist.targetDuration = target
            } else if let value = line.tagValue("#EXT-X-MEDIA-SEQUENCE") {
                guard let sequence = Self.sequenceNumber(value) else { throw PlaylistError(reason: "bad EXT-X-MEDIA-SEQUENCE '\(value)'", line: lineNumber) }
                playlist.mediaSequence = sequence
            } else if let value = line.tagValue("#EXT-X-DISCONTINUITY-SEQUENCE") {
                guard let sequence = Self.sequenceNumber(value) else { throw PlaylistError(reason: "bad EXT-X-DISCONTINUITY-SEQUENCE '\(value)'", line: lineNumber) }
                playlist.discontinuitySequence = sequence
            } else if let value = line.tagValue("#EXTINF") {
                let seconds = value.prefix { $0 != "," }
                guard let parsed = Self.seconds(seconds) else { throw PlaylistError(reason: "bad EXTINF duration '\(seconds)'", line: lineNumber) }
                extinf = (parsed, lineNumber)
            } else if line == "#EXT-X-DISCONTINUITY" {
                discontinuities += 1
                // A date does not carry across a discontinuity; only a new tag gives one.
                nextProgramDateTime = nil
            } else if let value = line.tagValue("#EXT-X-PROGRAM-DATE-TIME") {
                guard let date = ProgramDateTime.parse(value) else {
                    throw PlaylistError(reason: "bad EXT-X-PROGRAM-DATE-TIME '\(value)' (an ISO 8601 date from 1970 to 9999 with a time zone)",
                                        line: lineNumber)
                }
                programDateTime = date
            } else if let value = line.tagValue("#EXT-X-KEY") {
                key = try parseKey(AttributeList(value), location: location, line: lineNumber)
            } else if let value = line.tagValue("#EXT-X-MAP") {
                let attributes = AttributeList(value)
                mapURI = attributes["URI"].map { Location.resolve($0, against: location) }
                mapByteRange = nil
                if let text = attributes["BYTERANGE"] {
                    // An init section's range without an offset starts at 0: there is no previous one to follow.
                    guard let range = ByteRange(Substring(text), following: 0) else {
                        throw PlaylistError(reason: "bad EXT-X-MAP BYTERANGE '\(text)'", line: lineNumber)
                    }
                    mapByteRange = range
                }
            } else if let value = line.tagValue("#EXT-X-BYTERANGE") {
                byteRange = (value, lineNumber)
            } else if let value = line.tagValue("#EXT-X-PLAYLIST-TYPE") {
                playlist.playlistType = String(value)
            } else if line == "#EXT-X-ENDLIST" {
                playlist.hasEndList = true
            } else if !line.isEmpty, !line.hasPrefix("#") {
                guard let (segmentDuration, extinfLine) = extinf else { throw PlaylistError(reason: "segment '\(line)' has no EXTINF", line: lineNumber) }
                let date = programDateTime ?? nextProgramDateTime
                // RFC 8216 §4.3.3.1: a rounded EXTINF is at most the target duration. One far past it
                // would have the frame clock play media that is not there.
                var note: String?
                var duration = segmentDuration
                if playlist.targetDuration > 0, segmentDuration > 2 * playlist.targetDuration + 1 {
                    note = "line \(extinfLine): EXTINF \(segmentDuration) s is far over EXT-X-TARGETDURATION \(playlist.targetDuration) s; taken as \(playlist.targetDuration) s"
                    duration = playlist.targetDuration
                }
                let uri = Location.resolve(line, against: location)
                var range: ByteRange?
                if let (text, rangeLine) = byteRange {
                    guard let parsed = ByteRange(text, following: rangeEnds[uri]) else {
                        throw PlaylistError(reason: "bad EXT-X-BYTERANGE '\(text)'" + (text.contains("@") ? ""
                            : " (without an offset it must follow a sub-range of the same resource)"), line: rangeLine)
                    }
                    range = parsed
                    rangeEnds[uri] = parsed.end
                }
                playlist.segments.append(Segment(
                    uri: uri, duration: duration, note: note,
                    mediaSequence: playlist.mediaSequence + playlist.segments.count,
                    discontinuitySequence: playlist.discontinuitySequence + discontinuities,
                    programDateTime: date, key: key, mapURI: mapURI, mapByteRange: mapByteRange, byteRange: range))
                nextProgramDateTime = date.map { $0.addingTimeInterval(duration) }
                extinf = nil
                programDateTime = nil
                byteRange = nil
            }
        }
        return playlist
    }

    private static func parseKey(_ attributes: AttributeList, location: String, line: Int) throws(PlaylistError) -> EncryptionKey? {
        switch attributes["METHOD"] {
        case "NONE":
            return nil
        case "AES-128":
            guard let uri = attributes["URI"] else { throw PlaylistError(reason: "EXT-X-KEY AES-128 without URI", line: line) }
            var iv: [UInt8]?
            if let text = attributes["IV"] {
                guard let bytes = hexBytes(text), bytes.count == 16 else {
                    throw PlaylistError(reason: "EXT-X-KEY IV '\(text)' is not 128 bits of hex", line: line)
                }
                iv = bytes
            }
            return EncryptionKey(uri: Location.resolve(uri, against: location), iv: iv)
        case let method:
            throw PlaylistError(reason: "EXT-X-KEY METHOD=\(method ?? "(missing)") is not supported (only NONE and AES-128)", line: line)
        }
    }

    /// A sequence number small enough that counting segments on from it cannot overflow.
    private static func sequenceNumber(_ text: Substring) -> Int? {
        Int(text).flatMap { (0...Int(Int32.max) * 1_000_000).contains($0) ? $0 : nil }
    }

    /// A day: a longer target would have a live playlist reloaded less than daily.
    static let maximumTargetDuration = 86_400.0

    /// A duration: finite, not negative, under a year (RFC 8216 gives no bound; time arithmetic needs one).
    private static func seconds(_ text: Substring) -> Double? {
        Double(text).flatMap { $0.isFinite && (0...31_536_000).contains($0) ? $0 : nil }
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        let digits = Array(text.dropFirst(2))
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

private extension String {
    /// The text after `tag:` when this line is that tag.
    func tagValue(_ tag: String) -> Substring? {
        guard hasPrefix(tag) else { return nil }
        let rest = dropFirst(tag.count)
        if rest.isEmpty { return rest }
        return rest.first == ":" ? rest.dropFirst() : nil
    }
}
