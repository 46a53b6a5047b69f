import FoundationEssentials

/// Where a tag was found: the input as the user named it and, for HLS, the segment.
public struct TagOrigin: Sendable, Equatable {
    /// The input as the user or caller named it.
    public var source: String
    /// The HLS segment, for tags read through a playlist.
    public var segment: TagOrigin.Segment?

    public init(source: String, segment: TagOrigin.Segment? = nil) {
        self.source = source
        self.segment = segment
    }
}

extension TagOrigin {
    /// The HLS segment a tag came from, as its playlist described it.
    public struct Segment: Sendable, Equatable {
        /// The segment's URI, resolved against its playlist.
        public var uri: String
        /// Its media sequence number (`EXT-X-MEDIA-SEQUENCE` plus its place in the playlist).
        public var mediaSequence: Int
        /// Its discontinuity sequence number: PTS are comparable only within one.
        public var discontinuitySequence: Int
        /// `EXT-X-PROGRAM-DATE-TIME` of its first sample, given or carried forward.
        public var programDateTime: Date?
        /// The segment's first PTS, which its PROGRAM-DATE-TIME refers to.
        public var startPTS: Int64?
        /// EXTINF: how much media time the segment adds to a player's buffer.
        public var duration: Double?
        /// `EXT-X-GAP`: the packager declared the segment missing. It was not fetched; it is
        /// media time without tags, not a lost segment.
        public var isGap: Bool
        /// Where a DASH segment sits in its MPD; `nil` for HLS.
        public var dash: TagOrigin.DASHPlace?
        /// The HLS interstitial whose asset the segment is part of; `nil` for the primary
        /// content's. Such a segment takes the media and discontinuity sequence of the primary
        /// segment the break follows (the break is in its place: a resumed meter finds it
        /// there); `uri` says which of the asset's segments it is.
        public var interstitial: TagOrigin.InterstitialPlace?
        /// Set on a `.segment` event when a break divides the segment: a player leaves the
        /// primary at a break's `START-DATE` inside it, or rejoins it at a resumption inside it,
        /// and plays the segment in parts. `programDateTime`, `startPTS` and `duration` are then
        /// the part's; a tag's origin keeps the whole segment's.
        public var part: TagOrigin.Part?

        public init(uri: String, mediaSequence: Int, discontinuitySequence: Int = 0, programDateTime: Date? = nil,
                    startPTS: Int64? = nil, duration: Double? = nil, isGap: Bool = false) {
            self.uri = uri
            self.mediaSequence = mediaSequence
            self.discontinuitySequence = discontinuitySequence
            self.programDateTime = programDateTime
            self.startPTS = startPTS
            self.duration = duration
            self.isGap = isGap
        }
    }

    /// A part of a segment a player plays: where it starts, in seconds from the segment's
    /// start, and whether it is the segment's last (a consumer counting segments counts that one).
    public struct Part: Sendable, Equatable {
        public var offset: Double
        public var isLast: Bool

        public init(offset: Double, isLast: Bool) {
            self.offset = offset
            self.isLast = isLast
        }
    }

    /// Where in an HLS interstitial a segment is: the break's `EXT-X-DATERANGE` ID, and which of
    /// its assets (from 0, in its `X-ASSET-LIST`'s order).
    public struct InterstitialPlace: Sendable, Equatable, Hashable {
        public var id: String
        public var asset: Int

        public init(id: String, asset: Int) {
            self.id = id
            self.asset = asset
        }
    }

    /// A DASH segment's place: its `media_sequence` is its `$Number$`, its
    /// `discontinuity_sequence` its Period's start in milliseconds (stable across refreshes of
    /// the MPD, rising with each Period; times are comparable only within one).
    public struct DASHPlace: Sendable, Equatable {
        /// The Period's `id` (its place among the MPD's Periods when it has none).
        public var period: String
        public var representation: String
        /// `$Time$`: its start on the media timeline, in the Representation's timescale.
        public var time: Int

        public init(period: String, representation: String, time: Int) {
            self.period = period
            self.representation = representation
            self.time = time
        }
    }
}

/// A decoded ID3 tag with its presentation time.
public struct TimedTag: Sendable {
    /// The whole tag: every frame, Nielsen or not, and notes on what was read leniently.
    public var tag: ID3Tag { storage.tag }
    /// The PTS of the packet, sample or event that carried it (90 kHz, as carried); `nil` when there is none.
    public var pts: Int64? { storage.pts }
    /// Where it was read.
    public var origin: TagOrigin { storage.origin }
    /// The tag's Nielsen PRIV frames, parsed once.
    public var nielsenTags: [NielsenTag] { storage.nielsenTags }
    /// Its tag stream and what was wrong with the way it was carried (what the QA report
    /// judges); `nil` from a source that says nothing of it.
    package var carriage: Carriage? { storage.carriage }
    /// Where in a transport stream it was carried; `nil` for other forms.
    public var transportStream: TransportStreamPlace? { storage.transportStream }

    /// The fields, in one object: a tag is passed through every stage of the pipeline and held in
    /// async functions' frames while they wait, where 377 bytes a copy made frames of tens of
    /// kilobytes a channel (docs/PERFORMANCE.md); a tag never changes once read.
    private final class Storage: Sendable {
        let tag: ID3Tag
        let pts: Int64?
        let origin: TagOrigin
        let nielsenTags: [NielsenTag]
        let carriage: Carriage?
        let transportStream: TransportStreamPlace?

        init(tag: ID3Tag, pts: Int64?, origin: TagOrigin, nielsenTags: [NielsenTag], carriage: Carriage?, transportStream: TransportStreamPlace?) {
            (self.tag, self.pts, self.origin, self.nielsenTags) = (tag, pts, origin, nielsenTags)
            (self.carriage, self.transportStream) = (carriage, transportStream)
        }
    }

    private let storage: Storage

    /// The program and PID of an MPEG-TS tag: an MPTS carries several channels, one a program.
    public struct TransportStreamPlace: Sendable, Equatable {
        /// The program_number of the PMT that lists the PID (`nil` before any PMT did).
        public var program: Int?
        public var pid: Int

        public init(program: Int?, pid: Int) {
            self.program = program
            self.pid = pid
        }
    }

    /// `tag` at `pts`, its Nielsen PRIV frames parsed now.
    public init(tag: ID3Tag, pts: Int64?, origin: TagOrigin, transportStream: TransportStreamPlace? = nil) {
        self.init(tag: tag, pts: pts, origin: origin, carriage: nil, transportStream: transportStream)
    }

    package init(tag: ID3Tag, pts: Int64?, origin: TagOrigin, carriage: Carriage?, transportStream: TransportStreamPlace? = nil) {
        var carriage = carriage
        // A break's tags are a tag stream of their own: spaced against each other, not the primary's.
        if let interstitial = origin.segment?.interstitial { carriage?.stream += " in interstitial \(interstitial.id)" }
        storage = Storage(tag: tag, pts: pts, origin: origin,
                          nielsenTags: tag.frames.compactMap { if case .priv(let owner, _) = $0.content { NielsenTag(owner: owner) } else { nil } },
                          carriage: carriage, transportStream: transportStream)
    }

    /// The tag's wall-clock time: its segment's PROGRAM-DATE-TIME plus its distance
    /// from the segment's start.
    public var programDateTime: Date? {
        guard let segment = origin.segment, let date = segment.programDateTime else { return nil }
        guard let pts, let start = segment.startPTS else { return date }
        return date.addingTimeInterval(PTS.seconds(PTS.distance(from: start, to: pts)))
    }

}
