import FoundationEssentials

/// An HLS playlist (RFC 8216): a master playlist lists variants, a media playlist lists segments.
package enum Playlist: Sendable {
    case master(MasterPlaylist)
    case media(MediaPlaylist)
}

/// A multivariant playlist: the encodings (`EXT-X-STREAM-INF`) and the renditions (`EXT-X-MEDIA`).
package struct MasterPlaylist: Sendable {
    public var variants: [Variant]
    public var renditions: [Rendition]
    /// `EXT-X-CONTENT-STEERING` `PATHWAY-ID`: the pathway to start on.
    public var steeringPathway: String?
    /// `EXT-X-CONTENT-STEERING` `SERVER-URI`: where the steering manifest comes from.
    public var steeringServer: String?
    /// Its `EXT-X-DEFINE` variables, which its media playlists may `IMPORT`.
    public var variables: [String: String] = [:]

    /// The audio rendition a player would play with `variant`: its group's DEFAULT, else the
    /// group's first with a URI of its own (one without is muxed into the variant).
    public func audioRendition(for variant: Variant) -> Rendition? {
        let group = renditions.filter { $0.type == "AUDIO" && $0.groupID == variant.audioGroup && $0.uri != nil }
        return group.first(where: \.isDefault) ?? group.first
    }

    /// The audio renditions with a playlist of their own, each URI once, in the playlist's order.
    public var audioRenditions: [Rendition] {
        var seen = Set<String>()
        return renditions.filter { $0.type == "AUDIO" && $0.uri.map { seen.insert($0).inserted } == true }
    }

    /// `variant` and its redundant copies (RFC 8216bis 6.3.x: the same encoding on other hosts
    /// or pathways, told by everything but the URI), the steering's pathway first, else in the
    /// playlist's order with `variant` first: where a player goes when a host fails.
    public func paths(for variant: Variant) -> [Variant] {
        let copies = variants.filter { $0.uri != variant.uri && $0.isRedundantCopy(of: variant) }
        let paths = [variant] + copies
        guard let preferred = steeringPathway else { return paths }
        return paths.filter { $0.pathway == preferred } + paths.filter { $0.pathway != preferred }
    }
}

/// `EXT-X-STREAM-INF`: one encoding of the presentation.
package struct Variant: Sendable, Equatable {
    public var uri: String
    public var bandwidth: Int
    public var frameRate: Double?
    public var resolution: String?
    public var codecs: String?
    public var audioGroup: String?
    /// `PATHWAY-ID`: the content-steering pathway (CDN) it is on.
    public var pathway: String?

    /// The same encoding: a redundant stream's audio group may differ, its own host's.
    package func isRedundantCopy(of other: Variant) -> Bool {
        bandwidth == other.bandwidth && frameRate == other.frameRate && resolution == other.resolution && codecs == other.codecs
    }
}

/// `EXT-X-MEDIA`: an alternative rendition (audio, subtitles, ...).
package struct Rendition: Sendable, Equatable {
    public var type: String
    public var groupID: String
    public var name: String
    public var uri: String?
    public var isDefault: Bool
}

/// A playlist of segments, with what RFC 8216 says a client follows it by.
package struct MediaPlaylist: Sendable {
    public var targetDuration: Double
    public var mediaSequence: Int
    public var discontinuitySequence: Int
    /// `EXT-X-ENDLIST`: no segment will be added (VOD, or a live event that ended).
    public var hasEndList: Bool
    /// `EXT-X-PLAYLIST-TYPE`: `VOD`, `EVENT`, or absent for a sliding live window.
    public var playlistType: String?
    /// The segments listed, but for the first `skippedSegments` when it was read from a floor
    /// (`PlaylistParser.parse(_:location:keepingSegmentsFrom:)`).
    public var segments: [Segment]
    public var skippedSegments = 0
    /// `EXT-X-SERVER-CONTROL CAN-BLOCK-RELOAD=YES`: a reload may ask for the next segment
    /// (`_HLS_msn`) and the server holds the answer until it is there.
    public var canBlockReload = false
    /// `EXT-X-SERVER-CONTROL CAN-SKIP-UNTIL`: a reload may ask for a delta update
    /// (`_HLS_skip=YES`), segments older than this many seconds from the end left out.
    public var canSkipUntil: Double?
    /// The interstitials its `EXT-X-DATERANGE` tags schedule, in the order they were listed.
    public var interstitials: [Interstitial] = []

    /// The media sequence number of the last segment listed.
    public var lastSequence: Int? {
        let count = skippedSegments + segments.count
        return count == 0 ? nil : mediaSequence + count - 1
    }
}

/// One media segment and everything the playlist says about it.
package struct Segment: Sendable, Equatable {
    public var uri: String
    public var duration: Double
    /// What was wrong with its playlist entry and how it was read anyway.
    public var note: String?
    public var mediaSequence: Int
    public var discontinuitySequence: Int
    /// `EXT-X-PROGRAM-DATE-TIME` of the segment's first sample, given or carried forward.
    public var programDateTime: Date?
    /// The key of whole-segment encryption (AES-128), fetched to decrypt the segment.
    public var key: EncryptionKey?
    /// Sample encryption: read as it is, no key fetched.
    public var sampleEncryption: SampleEncryption?
    /// `EXT-X-GAP`: the packager says the segment is missing; it is not fetched.
    public var isGap = false
    /// `EXT-X-MAP`: the segment needs an initialisation section (fMP4), maybe a sub-range of its resource.
    public var mapURI: String?
    public var mapByteRange: ByteRange?
    /// `EXT-X-BYTERANGE`: the segment is this sub-range of its resource.
    public var byteRange: ByteRange?
    /// A DASH segment's place in its MPD (DASH segments are read as HLS ones are).
    public var dash: TagOrigin.DASHPlace?
    /// The interstitial this segment is an asset's segment of; `nil` for the primary's.
    public var interstitial: TagOrigin.InterstitialPlace?

    package init(uri: String, duration: Double, note: String? = nil, mediaSequence: Int, discontinuitySequence: Int,
                 programDateTime: Date? = nil, key: EncryptionKey? = nil, sampleEncryption: SampleEncryption? = nil, isGap: Bool = false,
                 mapURI: String? = nil, mapByteRange: ByteRange? = nil, byteRange: ByteRange? = nil, dash: TagOrigin.DASHPlace? = nil) {
        self.uri = uri
        self.duration = duration
        self.note = note
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.programDateTime = programDateTime
        self.key = key
        self.sampleEncryption = sampleEncryption
        self.isGap = isGap
        self.mapURI = mapURI
        self.mapByteRange = mapByteRange
        self.byteRange = byteRange
        self.dash = dash
    }
}

/// A sub-range of a resource (RFC 8216 §4.3.2.2), its offset resolved.
package struct ByteRange: Sendable, Equatable, CustomStringConvertible {
    package var offset: Int
    package var length: Int

    package init(offset: Int, length: Int) {
        self.offset = offset
        self.length = length
    }

    package var end: Int { offset + length }

    /// `<n>[@<o>]`; without `o`, the range starts at `following` (the end of the previous
    /// sub-range of the same resource). `nil` when the text is no range or would overflow.
    init?(_ text: Substring, following: Int?) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let length = Int(parts[0]), length >= 0 else { return nil }
        let offset: Int
        if parts.count == 2 {
            guard let given = Int(parts[1]), given >= 0 else { return nil }
            offset = given
        } else {
            guard let following else { return nil }
            offset = following
        }
        guard !offset.addingReportingOverflow(length).overflow else { return nil }
        (self.offset, self.length) = (offset, length)
    }

    package var description: String { "\(length)@\(offset)" }
}

/// An `EXT-X-KEY` in force.
package enum SegmentKey: Sendable, Equatable {
    case wholeSegment(EncryptionKey)
    case samples(method: String)

    var wholeSegment: EncryptionKey? {
        if case .wholeSegment(let key) = self { key } else { nil }
    }
}

/// Sample encryption (`SAMPLE-AES`, `SAMPLE-AES-CTR`, `SAMPLE-AES-CENC`): audio and video
/// samples are encrypted, timed ID3 is not (its own PES in MPEG-TS, ID3 tags between the
/// frames of packed audio, `emsg` boxes in fMP4), so its tags are read without a key.
package struct SampleEncryption: Sendable, Equatable {
    static let methods: Set<String> = ["SAMPLE-AES", "SAMPLE-AES-CTR", "SAMPLE-AES-CENC"]

    package var method: String
    /// The key systems its playlist names (`identity`, `com.apple.streamingkeydelivery`, a
    /// Widevine or PlayReady `urn:uuid:`...), in the playlist's order.
    package var keyFormats: [String]
}

extension SampleEncryption {
    /// The sample encryption of `keys`, `nil` when none of them is.
    init?(_ keys: [(format: String, key: SegmentKey)]) {
        let samples = keys.compactMap { entry -> (String, String)? in
            if case .samples(let method) = entry.key { (entry.format, method) } else { nil }
        }
        guard let first = samples.first else { return nil }
        self.init(method: first.1, keyFormats: samples.map(\.0))
    }
}

/// `EXT-X-KEY` with `METHOD=AES-128` (METHOD=NONE is no key at all).
package struct EncryptionKey: Sendable, Equatable {
    public var uri: String
    /// 16 bytes; absent means the IV is the segment's media sequence number.
    public var iv: [UInt8]?
}
