import Foundation

/// Where a tag was found: the input as the user named it and, for HLS, the segment.
public struct TagOrigin: Sendable, Equatable {
    public var source: String
    public var segment: SegmentOrigin?

    public init(source: String, segment: SegmentOrigin? = nil) {
        self.source = source
        self.segment = segment
    }
}

public struct SegmentOrigin: Sendable, Equatable {
    public var uri: String
    public var mediaSequence: Int
    public var discontinuitySequence: Int
    public var programDateTime: Date?
    /// The segment's first PTS, which its PROGRAM-DATE-TIME refers to.
    public var startPTS: Int64?

    public init(uri: String, mediaSequence: Int, discontinuitySequence: Int = 0, programDateTime: Date? = nil,
                startPTS: Int64? = nil) {
        self.uri = uri
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.programDateTime = programDateTime
        self.startPTS = startPTS
    }
}

/// A decoded ID3 tag with its presentation time.
public struct TimedTag: Sendable {
    public let tag: ID3Tag
    public let pts: Int64?
    public let origin: TagOrigin
    /// The tag's Nielsen PRIV frames, parsed once.
    public let nielsenTags: [NielsenTag]

    public init(tag: ID3Tag, pts: Int64?, origin: TagOrigin) {
        self.tag = tag
        self.pts = pts
        self.origin = origin
        nielsenTags = tag.privFrames.compactMap { NielsenTag(owner: $0.owner) }
    }

    /// The tag's wall-clock time: its segment's PROGRAM-DATE-TIME plus its distance
    /// from the segment's start.
    public var programDateTime: Date? {
        guard let segment = origin.segment, let date = segment.programDateTime else { return nil }
        guard let pts, let start = segment.startPTS else { return date }
        return date.addingTimeInterval(PTS.seconds(PTS.distance(from: start, to: pts)))
    }

}

/// An input, or one segment of it, that could not be read, or was read only leniently (a
/// warning): named, with the reason.
public struct InputFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var source: String
    public var segment: String?
    public var reason: String

    public init(source: String, segment: String? = nil, reason: String) {
        self.source = source
        self.segment = segment
        self.reason = reason
    }

    public var description: String {
        segment.map { "\(source): segment \($0): \(reason)" } ?? "\(source): \(reason)"
    }
}

/// What a scan reports, in stream order.
public enum ScanEvent: Sendable {
    /// A segment was read (after its tags): reports count the segments that held none.
    case segment(SegmentOrigin)
    case tag(TimedTag)
    /// A timed-ID3 packet whose bytes do not decode; `pts` places it.
    case malformed(ID3ParseError, pts: Int64?, origin: TagOrigin)
    case failure(InputFailure)
    /// Something wrong that was read around (a value out of range, taken as a fallback).
    case warning(InputFailure)
}
