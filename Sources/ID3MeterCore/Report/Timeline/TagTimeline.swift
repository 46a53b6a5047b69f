import FoundationEssentials

/// One source's Nielsen tags laid out in time, as the HTML report and `serve`'s live page draw
/// them: a mark per tag (or per bin of tags, where marks would overlap), the gaps the QA report
/// flags, the breaks in PTS and the segments that carried no tag. Times are seconds on the
/// timeline's axis (`t`), which runs with the stream's PTS and steps over breaks (see
/// `TimelineRecorder`); `start` is the wall-clock time at `t = 0` when it is known.
///
/// Encoded compactly (arrays, not objects, per mark): a million tags must stay a file a browser opens.
package struct TagTimeline: Encodable, Sendable, Equatable {
    /// What a tag is, for its mark's shape, colour and lane.
    public enum Kind: String, Encodable, Sendable, CaseIterable {
        case valid = "v", invalid = "i", placeholder = "p"

        init(_ tag: NielsenTag) {
            self = !tag.isValid ? .invalid : tag.hasPlaceholderPCCID ? .placeholder : .valid
        }
    }

    /// One tag: where it sits on the axis, its PTS, and what the page shows of it when kept.
    public struct Mark: Encodable, Sendable, Equatable {
        public var t: Double
        public var kind: Kind
        public var pts: Int64?
        public var detail: TagDetail?

        public func encode(to encoder: Encoder) throws {
            var array = encoder.unkeyedContainer()
            try array.encode(TagTimeline.rounded(t))
            try array.encode(kind)
            try array.encode(pts)
            if let detail { try array.encode(detail) }
        }
    }

    /// Tags drawn as one mark because they would overlap: how many of each kind lie in `from..<to`.
    public struct Bin: Encodable, Sendable, Equatable {
        public var from: Double
        public var to: Double
        public var valid = 0
        public var invalid = 0
        public var placeholder = 0
        public var firstPTS: Int64?
        public var lastPTS: Int64?

        public var count: Int { valid + invalid + placeholder }

        public func encode(to encoder: Encoder) throws {
            var array = encoder.unkeyedContainer()
            for value in [from, to] { try array.encode(TagTimeline.rounded(value)) }
            for value in [valid, invalid, placeholder] { try array.encode(value) }
            try array.encode(firstPTS)
            try array.encode(lastPTS)
        }
    }

    /// A stretch of the axis: a gap the QA report flags, or a segment without a tag. `count`
    /// says how many were merged into it (gaps back to back; anything closer than a bin when
    /// aggregated), `seconds` the worst of them: the shortest short gap, the longest of the rest.
    public struct Span: Encodable, Sendable, Equatable {
        public enum Kind: String, Encodable, Sendable { case shortGap = "short", longGap = "long", emptySegment = "empty" }
        public var from: Double
        public var to: Double
        public var kind: Kind
        /// The gap's length in stream time, or the segments' EXTINF.
        public var seconds: Double
        public var count = 1
        /// The segment's URI, for a segment without a tag.
        public var label: String?

        public func encode(to encoder: Encoder) throws {
            var array = encoder.unkeyedContainer()
            for value in [from, to, seconds] { try array.encode(TagTimeline.rounded(value)) }
            try array.encode(kind)
            try array.encode(count)
            try array.encode(label)
        }
    }

    /// A point where the PTS stop being comparable: a discontinuity or a jump.
    public struct Break: Encodable, Sendable, Equatable {
        public var t: Double
        public var detail: String
        public var count = 1

        public func encode(to encoder: Encoder) throws {
            var array = encoder.unkeyedContainer()
            try array.encode(TagTimeline.rounded(t))
            try array.encode(detail)
            try array.encode(count)
        }
    }

    public var start: Date?
    /// The axis runs from 0 to `end`.
    public var end: Double
    /// Every tag on the timeline, drawn one by one or in bins.
    public var tags: Int
    /// The tags, one mark each; empty when `bins` holds them.
    public var marks: [Mark] = []
    /// The tags in bins `binSeconds` wide, when one mark each would overlap.
    public var bins: [Bin] = []
    public var binSeconds: Double?
    public var spans: [Span] = []
    public var breaks: [Break] = []
    /// Tags whose details (payload fields, notes) were not kept: the report keeps a bounded number.
    public var withoutDetails = 0

    enum CodingKeys: String, CodingKey {
        case start, end, tags, marks, bins, binSeconds = "bin_seconds", spans, breaks, withoutDetails = "without_details"
    }

    /// Times to the millisecond: more digits say nothing a page can draw, and cost bytes per tag.
    static func rounded(_ seconds: Double) -> Double { (seconds * 1_000).rounded() / 1_000 }
}

/// What a tag's mark shows when it is opened: its time, where it was read, its fields and notes.
package final class TagDetail: Encodable, Sendable, Equatable {
    public let pts: Int64?
    public let programDateTime: String?
    public let segment: String?
    public let pcCID: String?
    public let fdCID: String?
    public let watermark: String?
    public let pcOffset: String?
    public let fdOffset: String?
    public let breakout: String?
    /// The tag's issues, and what was read leniently.
    public let notes: [String]

    init(_ tag: NielsenTag, _ timed: TimedTag) {
        pts = timed.pts
        programDateTime = timed.programDateTime.map(ProgramDateTime.format)
        segment = timed.origin.segment?.uri
        pcCID = tag.pcCID
        fdCID = tag.fdCID
        watermark = tag.watermarkData
        pcOffset = tag.pcOffset
        fdOffset = tag.fdOffset
        breakout = tag.breakout
        notes = tag.issues.map(\.description) + ((timed.carriage?.note).map { [$0] + timed.tag.notes } ?? timed.tag.notes)
    }

    enum CodingKeys: String, CodingKey {
        case programDateTime = "program_date_time", segment, pcCID = "pc_cid", fdCID = "fd_cid", watermark
        case pcOffset = "pc_offset", fdOffset = "fd_offset", breakout, notes
    }

    public static func == (lhs: TagDetail, rhs: TagDetail) -> Bool {
        (lhs.pts, lhs.segment, lhs.watermark, lhs.notes) == (rhs.pts, rhs.segment, rhs.watermark, rhs.notes)
    }
}
