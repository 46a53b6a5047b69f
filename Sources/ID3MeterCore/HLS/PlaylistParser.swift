import FoundationEssentials

/// Why a playlist could not be read, with its line number.
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: Reason
    public var line: Int?

    public init(_ reason: Reason, line: Int?) {
        self.reason = reason
        self.line = line
    }

    /// What is wrong; the texts are the playlist's own values.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// No `#EXTM3U` on the first line.
        case notHLS
        case variantWithoutBandwidth
        case badBandwidth(String)
        case badTargetDuration(String)
        case badMediaSequence(String)
        case badDiscontinuitySequence(String)
        /// `EXT-X-SKIP` without a count of segments that the playlist could have listed.
        case badSkip(String)
        case badDuration(String)
        case badMapByteRange(String)
        /// A segment URI without an `EXTINF` before it.
        case segmentWithoutDuration(String)
        case badByteRange(String)
        case badProgramDateTime(String)
        case keyWithoutURI
        case badKeyIV(String)
        /// `EXT-X-KEY` with a method other than NONE, AES-128 and the sample-encryption ones (`nil`: none given).
        case unsupportedKeyMethod(String?)
        /// `EXT-X-KEY` METHOD=AES-128 with a KEYFORMAT other than identity: the key is a DRM
        /// system's, and whole segments cannot be read without it.
        case wholeSegmentKeyFormat(String)
        /// `EXT-X-DEFINE` that defines nothing usable (what is wrong, in words).
        case badDefine(String)
        /// A `{$name}` reference before (or without) an `EXT-X-DEFINE` of that name.
        case undefinedVariable(String)
        /// `EXT-X-DEFINE:IMPORT` of a variable the master playlist does not define.
        case undefinedImport(String)
        /// `EXT-X-DEFINE:QUERYPARAM` of a parameter the playlist's URL does not carry.
        case missingQueryParameter(String)
        /// The values substituted would add more than this many bytes to the playlist.
        case variablesTooLarge(Int)

        public var description: String {
            switch self {
            case .notHLS: "not an HLS playlist (no #EXTM3U on the first line)"
            case .variantWithoutBandwidth: "EXT-X-STREAM-INF without BANDWIDTH"
            case .badBandwidth(let text):
                "EXT-X-STREAM-INF BANDWIDTH '\(text)' "
                    + (!text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } ? "is too large (over 2^63 - 1)" : "is not a decimal integer")
            case .badTargetDuration(let text): "bad EXT-X-TARGETDURATION '\(text)' (0 to \(Int(PlaylistParser.maximumTargetDuration)) s)"
            case .badMediaSequence(let text): "bad EXT-X-MEDIA-SEQUENCE '\(text)'"
            case .badDiscontinuitySequence(let text): "bad EXT-X-DISCONTINUITY-SEQUENCE '\(text)'"
            case .badSkip(let text): "bad EXT-X-SKIP '\(text)' (SKIPPED-SEGMENTS, before the first segment)"
            case .badDuration(let text): "bad EXTINF duration '\(text)'"
            case .badMapByteRange(let text): "bad EXT-X-MAP BYTERANGE '\(text)'"
            case .segmentWithoutDuration(let uri): "segment '\(uri)' has no EXTINF"
            case .badByteRange(let text):
                "bad EXT-X-BYTERANGE '\(text)'" + (text.contains("@") ? "" : " (without an offset it must follow a sub-range of the same resource)")
            case .badProgramDateTime(let text):
                "bad EXT-X-PROGRAM-DATE-TIME '\(text)' (an ISO 8601 date from 1970 to 9999 with a time zone)"
            case .keyWithoutURI: "EXT-X-KEY AES-128 without URI"
            case .badKeyIV(let text): "EXT-X-KEY IV '\(text)' is not 128 bits of hex"
            case .unsupportedKeyMethod(let method):
                "EXT-X-KEY METHOD=\(method ?? "(missing)") is not supported (only NONE, AES-128, SAMPLE-AES, SAMPLE-AES-CTR and SAMPLE-AES-CENC)"
            case .wholeSegmentKeyFormat(let format):
                "EXT-X-KEY METHOD=AES-128 with KEYFORMAT=\"\(format)\": whole segments encrypted with a DRM system's key cannot be read"
            case .badDefine(let problem): "bad EXT-X-DEFINE: \(problem)"
            case .undefinedVariable(let name): "variable '\(name)' is referenced ({$\(name)}) but not defined before (EXT-X-DEFINE)"
            case .undefinedImport(let name): "EXT-X-DEFINE IMPORT=\"\(name)\": the master playlist defines no variable '\(name)'"
            case .missingQueryParameter(let name): "EXT-X-DEFINE QUERYPARAM=\"\(name)\": the playlist's URL has no query parameter '\(name)'"
            case .variablesTooLarge(let bytes): "its variables would add more than \(bytes >> 20) MB to the playlist"
            }
        }
    }

    public var description: String { line.map { "line \($0): \(reason)" } ?? "\(reason)" }
}

/// Parses RFC 8216 playlists. URIs come out resolved against the playlist's own location.
package enum PlaylistParser {
    /// Parses a playlist read from `location` (which its relative references are resolved
    /// against), leniently as players do: what is wrong but readable becomes a segment's `note`;
    /// what leaves no playlist to follow throws, with its line.
    ///
    /// `keeping` says which of a media playlist's segments are made: a live playlist reloaded
    /// every few seconds then costs what is new in it, not its whole length again (an EVENT
    /// playlist a week long lists 300,000 segments). The others are counted (`skippedSegments`).
    ///
    /// `imports` are the variables of the master playlist a media playlist was reached from
    /// (`EXT-X-DEFINE:IMPORT`); a master playlist's own come out in `MasterPlaylist.variables`.
    public static func parse(_ text: String, location: String, keeping window: SegmentWindow = .all,
                             imports: [String: String] = [:]) throws(PlaylistError) -> Playlist {
        let lines = Lines(text: text[...]).lazy.map(Self.trimmed)
        guard lines.first(where: { _ in true })?.startsWithBytes("#EXTM3U") == true else {
            throw PlaylistError(.notHLS, line: 1)
        }
        if lines.contains(where: { $0.startsWithBytes("#EXT-X-STREAM-INF") }) {
            return .master(try parseMaster(Array(lines), location: location))
        }
        return .media(try parseMedia(lines, location: location, floor: window.floor(in: lines), imports: imports))
    }

    /// A line with its variables in place; `nil` for an `EXT-X-DEFINE`, taken into `variables`.
    private static func substituted(_ line: Substring, number: Int, variables: inout PlaylistVariables, imports: [String: String]?,
                                    location: String) throws(PlaylistError) -> Substring? {
        if let value = line.tagValue("#EXT-X-DEFINE") {
            try variables.define(AttributeList(value), imports: imports, location: location, line: number)
            return nil
        }
        return try variables.substitute(line, line: number)
    }

    /// Which segments of a media playlist are made.
    public enum SegmentWindow: Sendable, Equatable {
        case all
        /// Those from this media sequence number on: a live reload, what is new.
        case from(Int)
        /// The last `count` of a live playlist (a live join); every one of an ended playlist.
        case liveEdge(Int)

        /// The first media sequence number made; `nil` for all.
        fileprivate func floor(in lines: some Sequence<Substring>) -> Int? {
            switch self {
            case .all: return nil
            case .from(let sequence): return sequence
            case .liveEdge(let count):
                var sequence = 0, segments = 0
                for line in lines {
                    if line.isTag("#EXT-X-ENDLIST") { return nil }
                    if let value = line.tagValue("#EXT-X-MEDIA-SEQUENCE") { sequence = PlaylistParser.sequenceNumber(value) ?? 0 }
                    if line.isURI { segments += 1 }
                }
                return sequence + segments - max(count, 1)
            }
        }
    }

    /// A text's lines, split at LF, CR or CRLF, without copying it. The line breaks are looked
    /// for in its UTF-8 bytes: a view's index moved a byte at a time checks the string's
    /// encoding at each, and that was most of reading the playlists of a line-up's channels.
    private struct Lines: Sequence, IteratorProtocol {
        var text: Substring
        /// Where the next line starts, in bytes from the text's start; `nil` after the last.
        var offset: Int? = 0

        init(text: Substring) {
            self.text = text
        }

        mutating func next() -> Substring? {
            guard let start = offset else { return nil }
            // `withUTF8` has the bytes in one piece (a native string's are: nothing is copied).
            let (end, following) = text.withUTF8 { bytes -> (Int, Int?) in
                var index = start
                while index < bytes.count, bytes[index] != 0x0A, bytes[index] != 0x0D { index += 1 }
                guard index < bytes.count else { return (index, nil) }
                let crlf = bytes[index] == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A
                return (index, index + (crlf ? 2 : 1))
            }
            offset = following
            // Line breaks are character boundaries: the line is a slice of whole characters.
            let utf8 = text.utf8
            return text[utf8.index(utf8.startIndex, offsetBy: start)..<utf8.index(utf8.startIndex, offsetBy: end)]
        }
    }

    /// A line without the white space around it. Most lines have none: both ends are then
    /// printable ASCII, told from the bytes without reading a `Character`.
    private static func trimmed(_ line: Substring) -> Substring {
        let bytes = line.utf8
        if let head = bytes.first, let tail = bytes.last, (0x21..<0x7F).contains(head), (0x21..<0x7F).contains(tail) { return line }
        guard let first = line.firstIndex(where: { !$0.isWhitespace }), let last = line.lastIndex(where: { !$0.isWhitespace }) else {
            return line[line.endIndex...]
        }
        return line[first...last]
    }

    private static func parseMaster(_ lines: [Substring], location: String) throws(PlaylistError) -> MasterPlaylist {
        var variants: [Variant] = []
        var renditions: [Rendition] = []
        var pathway: String?
        var steeringServer: String?
        var pending: (attributes: AttributeList, line: Int)?
        var variables = PlaylistVariables()
        for (index, raw) in lines.enumerated() {
            guard let line = try substituted(raw, number: index + 1, variables: &variables, imports: nil, location: location) else { continue }
            if let value = line.tagValue("#EXT-X-CONTENT-STEERING") {
                let attributes = AttributeList(value)
                pathway = attributes["PATHWAY-ID"]
                steeringServer = attributes["SERVER-URI"].map { Location.resolve($0, against: location) }
            } else if let value = line.tagValue("#EXT-X-STREAM-INF") {
                pending = (AttributeList(value), index + 1)
            } else if let value = line.tagValue("#EXT-X-MEDIA") {
                let attributes = AttributeList(value)
                renditions.append(Rendition(type: attributes["TYPE"] ?? "", groupID: attributes["GROUP-ID"] ?? "",
                                            name: attributes["NAME"] ?? "",
                                            uri: attributes["URI"].map { Location.resolve($0, against: location) },
                                            isDefault: attributes["DEFAULT"] == "YES"))
            } else if line.isURI, let (attributes, tagLine) = pending {
                guard let text = attributes["BANDWIDTH"] else {
                    throw PlaylistError(.variantWithoutBandwidth, line: tagLine)
                }
                guard let bandwidth = Int(text), bandwidth >= 0 else {
                    throw PlaylistError(.badBandwidth(text), line: tagLine)
                }
                variants.append(Variant(uri: Location.resolve(String(line), against: location), bandwidth: bandwidth,
                                        frameRate: attributes.decimal("FRAME-RATE"), resolution: attributes["RESOLUTION"],
                                        codecs: attributes["CODECS"], audioGroup: attributes["AUDIO"],
                                        pathway: attributes["PATHWAY-ID"]))
                pending = nil
            }
        }
        return MasterPlaylist(variants: variants, renditions: renditions, steeringPathway: pathway, steeringServer: steeringServer,
                              variables: variables.values)
    }

    private static func parseMedia(_ lines: some Sequence<Substring>, location: String, floor: Int?,
                                   imports: [String: String]) throws(PlaylistError) -> MediaPlaylist {
        var playlist = MediaPlaylist(targetDuration: 0, mediaSequence: 0, discontinuitySequence: 0,
                                     hasEndList: false, playlistType: nil, segments: [])
        var extinf: (seconds: Double, line: Int)?
        var discontinuities = 0
        // RFC 8216bis 4.4.4.4: a key applies until the next with the same KEYFORMAT; NONE ends them all.
        var keys: [(format: String, key: SegmentKey)] = []
        var mapURI: String?
        var mapByteRange: ByteRange?
        var byteRange: (text: Substring, line: Int)?
        var gap = false
        /// Where the last sub-range ended, by resource: a range without an offset follows it.
        var rangeEnds: [String: Int] = [:]
        // Dates are read when a segment that is kept needs one: a skipped segment's is carried as
        // its text and the seconds since.
        var programDateTime: (text: Substring, line: Int)?
        var nextProgramDateTime: (date: ProgramDate, plus: Double)?
        var listed = 0
        var variables = PlaylistVariables()
        for (index, raw) in lines.enumerated() {
            let lineNumber = index + 1
            guard let line = try substituted(raw, number: lineNumber, variables: &variables, imports: imports, location: location) else { continue }
            if let value = line.tagValue("#EXT-X-TARGETDURATION") {
                guard let target = Self.seconds(value), target <= Self.maximumTargetDuration else {
                    throw PlaylistError(.badTargetDuration(String(value)), line: lineNumber)
                }
                playlist.targetDuration = target
            } else if let value = line.tagValue("#EXT-X-MEDIA-SEQUENCE") {
                guard let sequence = Self.sequenceNumber(value) else { throw PlaylistError(.badMediaSequence(String(value)), line: lineNumber) }
                playlist.mediaSequence = sequence
            } else if let value = line.tagValue("#EXT-X-DISCONTINUITY-SEQUENCE") {
                guard let sequence = Self.sequenceNumber(value) else { throw PlaylistError(.badDiscontinuitySequence(String(value)), line: lineNumber) }
                playlist.discontinuitySequence = sequence
            } else if let value = line.tagValue("#EXTINF") {
                let seconds = value.prefix { $0 != "," }
                guard let parsed = Self.seconds(seconds) else { throw PlaylistError(.badDuration(String(seconds)), line: lineNumber) }
                extinf = (parsed, lineNumber)
            } else if line.isTag("#EXT-X-DISCONTINUITY") {
                discontinuities += 1
                // A date does not carry across a discontinuity; only a new tag gives one.
                nextProgramDateTime = nil
            } else if let value = line.tagValue("#EXT-X-PROGRAM-DATE-TIME") {
                programDateTime = (value, lineNumber)
            } else if let value = line.tagValue("#EXT-X-KEY") {
                let attributes = AttributeList(value)
                let format = attributes["KEYFORMAT"] ?? "identity"
                keys.removeAll { $0.format == format }
                switch try parseKey(attributes, format: format, location: location, line: lineNumber) {
                case nil: keys.removeAll()
                case let key?: keys.append((format, key))
                }
            } else if let value = line.tagValue("#EXT-X-MAP") {
                let attributes = AttributeList(value)
                mapURI = attributes["URI"].map { Location.resolve($0, against: location) }
                mapByteRange = nil
                if let text = attributes["BYTERANGE"] {
                    // An init section's range without an offset starts at 0: there is no previous one to follow.
                    guard let range = ByteRange(Substring(text), following: 0) else {
                        throw PlaylistError(.badMapByteRange(String(text)), line: lineNumber)
                    }
                    mapByteRange = range
                }
            } else if let value = line.tagValue("#EXT-X-BYTERANGE") {
                byteRange = (value, lineNumber)
            } else if let value = line.tagValue("#EXT-X-PLAYLIST-TYPE") {
                playlist.playlistType = String(value)
            } else if let value = line.tagValue("#EXT-X-SERVER-CONTROL") {
                let attributes = AttributeList(value)
                playlist.canBlockReload = attributes["CAN-BLOCK-RELOAD"] == "YES"
                playlist.canSkipUntil = attributes.decimal("CAN-SKIP-UNTIL").flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            } else if let value = line.tagValue("#EXT-X-SKIP") {
                // A delta update (RFC 8216bis 4.4.5.2): the first segments are left out, but numbered.
                guard listed == 0, let text = AttributeList(value)["SKIPPED-SEGMENTS"], let skipped = Self.sequenceNumber(Substring(text)) else {
                    throw PlaylistError(.badSkip(String(value)), line: lineNumber)
                }
                listed = skipped
                playlist.skippedSegments += skipped
                nextProgramDateTime = nil
            } else if let value = line.tagValue("#EXT-X-DATERANGE") {
                // A later date range of the same ID says more of it (RFC 8216bis 4.4.5.1).
                if let interstitial = Interstitial.parse(AttributeList(value), location: location),
                   playlist.interstitials.count < Self.maximumInterstitials || playlist.interstitials.contains(where: { $0.id == interstitial.id }) {
                    playlist.interstitials.removeAll { $0.id == interstitial.id }
                    playlist.interstitials.append(interstitial)
                }
            } else if line.isTag("#EXT-X-GAP") {
                gap = true
            } else if line.isTag("#EXT-X-ENDLIST") {
                playlist.hasEndList = true
            } else if line.isURI {
                guard let (segmentDuration, extinfLine) = extinf else { throw PlaylistError(.segmentWithoutDuration(String(line)), line: lineNumber) }
                let sequence = playlist.mediaSequence + listed
                listed += 1
                let kept = floor.map { sequence >= $0 } ?? true
                let dated = programDateTime.map { (ProgramDate.text($0.text, line: $0.line), 0.0) } ?? nextProgramDateTime
                // RFC 8216 §4.3.3.1: a rounded EXTINF is at most the target duration. One far past it
                // would have the frame clock play media that is not there.
                var note: String?
                var duration = segmentDuration
                if playlist.targetDuration > 0, segmentDuration > 2 * playlist.targetDuration + 1 {
                    note = "line \(extinfLine): EXTINF \(segmentDuration) s is far over EXT-X-TARGETDURATION \(playlist.targetDuration) s; taken as \(playlist.targetDuration) s"
                    duration = playlist.targetDuration
                }
                // A sub-range without an offset follows the one before on its resource, kept or not.
                let uri = kept || byteRange != nil ? Location.resolve(String(line), against: location) : ""
                var range: ByteRange?
                if let (text, rangeLine) = byteRange {
                    guard let parsed = ByteRange(text, following: rangeEnds[uri]) else {
                        throw PlaylistError(.badByteRange(String(text)), line: rangeLine)
                    }
                    range = parsed
                    rangeEnds[uri] = parsed.end
                }
                if kept {
                    var date: Date?
                    if let (start, plus) = dated {
                        date = try start.date().addingTimeInterval(plus)
                        nextProgramDateTime = (.date(date!.addingTimeInterval(duration)), 0)
                    }
                    playlist.segments.append(Segment(
                        uri: uri, duration: duration, note: note, mediaSequence: sequence,
                        discontinuitySequence: playlist.discontinuitySequence + discontinuities,
                        programDateTime: date, key: keys.lazy.compactMap(\.key.wholeSegment).first,
                        sampleEncryption: SampleEncryption(keys), isGap: gap, mapURI: mapURI, mapByteRange: mapByteRange, byteRange: range))
                } else {
                    playlist.skippedSegments += 1
                    nextProgramDateTime = dated.map { ($0.0, $0.1 + duration) }
                }
                if dated == nil { nextProgramDateTime = nil }
                extinf = nil
                programDateTime = nil
                byteRange = nil
                gap = false
            }
        }
        // A date no segment took is still checked.
        if let (text, line) = programDateTime { _ = try ProgramDate.text(text, line: line).date() }
        return playlist
    }

    /// A segment's date: read, or its tag's text, read when a kept segment needs it.
    private enum ProgramDate {
        case date(Date)
        case text(Substring, line: Int)

        func date() throws(PlaylistError) -> Date {
            switch self {
            case .date(let date): return date
            case .text(let value, let line):
                guard let date = ProgramDateTime.parse(value) else {
                    throw PlaylistError(.badProgramDateTime(String(value)), line: line)
                }
                return date
            }
        }
    }

    /// The key `attributes` put in force; `nil` for METHOD=NONE.
    private static func parseKey(_ attributes: AttributeList, format: String, location: String, line: Int) throws(PlaylistError) -> SegmentKey? {
        switch attributes["METHOD"] {
        case "NONE":
            return nil
        case "AES-128":
            guard format == "identity" else { throw PlaylistError(.wholeSegmentKeyFormat(format), line: line) }
            guard let uri = attributes["URI"] else { throw PlaylistError(.keyWithoutURI, line: line) }
            var iv: [UInt8]?
            if let text = attributes["IV"] {
                guard let bytes = hexBytes(text), bytes.count == 16 else {
                    throw PlaylistError(.badKeyIV(String(text)), line: line)
                }
                iv = bytes
            }
            return .wholeSegment(EncryptionKey(uri: Location.resolve(uri, against: location), iv: iv))
        case let method? where SampleEncryption.methods.contains(String(method)):
            // Its URI is a key system's (skd://, data:, a licence server) and never fetched: nothing read here needs it.
            return .samples(method: String(method))
        case let method:
            throw PlaylistError(.unsupportedKeyMethod(method.map { String($0) }), line: line)
        }
    }

    /// A sequence number small enough that counting segments on from it cannot overflow.
    fileprivate static func sequenceNumber(_ text: Substring) -> Int? {
        Int(text).flatMap { (0...Int(Int32.max) * 1_000_000).contains($0) ? $0 : nil }
    }

    /// Interstitials one playlist may schedule (a four-hour window with a break every minute).
    package static let maximumInterstitials = 1_000

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

// Lines are read on their UTF-8 bytes: a playlist is reloaded every few seconds by every channel,
// and comparing `Character`s (grapheme breaking, canonical equivalence) was most of its parse. The
// tags are ASCII, which only an identical byte sequence matches, and what follows a tag's name
// (`:` or the line's end) is checked as a byte too, so the results are those of the `Character`s.
private extension Substring {
    /// The text after `tag:` when this line is that tag.
    func tagValue(_ tag: String) -> Substring? {
        guard startsWithBytes(tag) else { return nil }
        let bytes = utf8
        let end = bytes.index(bytes.startIndex, offsetBy: tag.utf8.count)
        if end == bytes.endIndex { return self[end...] }
        return bytes[end] == UInt8(ascii: ":") ? self[bytes.index(after: end)...] : nil
    }

    /// The line begins with `prefix`'s bytes.
    func startsWithBytes(_ prefix: String) -> Bool { utf8.starts(with: prefix.utf8) }

    /// The line is the tag `tag`, without a value.
    func isTag(_ tag: String) -> Bool { utf8.elementsEqual(tag.utf8) }

    /// The line is a URI: not blank, not a tag or comment.
    var isURI: Bool { utf8.first.map { $0 != UInt8(ascii: "#") } ?? false }
}
