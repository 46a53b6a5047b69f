/// The renditions of one presentation (an HLS master playlist's variants and audio renditions, an
/// MPD's Representations), each read on its own, compared by their Nielsen tags: a viewer is
/// credited from the tags in what they play, so a rendition that lost its tags, or carries them
/// at other times, leaves every viewer on it uncredited while the others are fine.
///
/// Judged, for each rendition that was read:
/// - **no timed ID3**: it carries no Nielsen tag while another rendition of its group does (a
///   group, as HLS variants or the audio renditions, or a DASH content type, that carries none
///   at all is the packager's design: the tags ride elsewhere);
/// - **missing**: a tag that at least half of the renditions whose read media covers its time
///   carry, which this one, covering it too, does not;
/// - **extra**: a tag fewer than half of them carry, which this one does;
/// - **offset**: its tags' PTS differ from the reference rendition's (the one most others agree
///   with) by more than a frame, as a median over the tags both carry.
/// Tags are told apart by their payload identity (`tag_id`); a rendition's first copy of each counts.
package struct RenditionComparison: Encodable, Sendable {
    /// What the user named: the master playlist or MPD.
    public var source: String
    /// The frame the offsets are judged against, in seconds.
    public var frame: Double
    public var renditions: [Row]

    /// One rendition: what it is and what was wrong with it.
    public struct Row: Encodable, Sendable {
        /// Its URI (HLS) or Representation id (DASH).
        public var name: String
        public var group: String
        public var bandwidth: Int?
        public var readable: Bool
        public var tags: Int
        /// Its tags' median PTS distance from the reference's, in seconds; `nil` when none is shared.
        public var offset: Double?
        /// Its group carries no Nielsen tag at all: it is not judged for missing tags.
        public var groupCarriesNone: Bool
        public var faults: [Fault]

        public var passed: Bool { faults.isEmpty }

        enum CodingKeys: String, CodingKey {
            case name, group, bandwidth, readable, tags, offset = "offset_seconds", groupCarriesNone = "group_carries_none", faults, passed
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(group, forKey: .group)
            try container.encodeIfPresent(bandwidth, forKey: .bandwidth)
            try container.encode(readable, forKey: .readable)
            try container.encode(tags, forKey: .tags)
            try container.encodeIfPresent(offset, forKey: .offset)
            try container.encode(groupCarriesNone, forKey: .groupCarriesNone)
            try container.encode(faults, forKey: .faults)
            try container.encode(passed, forKey: .passed)
        }
    }

    /// What is wrong with a rendition.
    public enum Fault: Encodable, Sendable, Equatable {
        /// Nothing of it could be read.
        case unreadable
        /// No Nielsen tag at all, while its group's others carry them.
        case noTimedID3
        /// Tags the others carry that it lacks, with the first and last of its segments where they should be.
        case missing(count: Int, firstSegment: String?, lastSegment: String?)
        /// Tags it carries that most others lack.
        case extra(count: Int, firstSegment: String?, lastSegment: String?)
        /// Its tags come this many seconds after the reference's (before, when negative).
        case offset(seconds: Double)

        enum CodingKeys: String, CodingKey { case kind, count, firstSegment = "first_segment", lastSegment = "last_segment", seconds }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .unreadable: try container.encode("unreadable", forKey: .kind)
            case .noTimedID3: try container.encode("no_timed_id3", forKey: .kind)
            case .missing(let count, let first, let last), .extra(let count, let first, let last):
                try container.encode(self.kind, forKey: .kind)
                try container.encode(count, forKey: .count)
                try container.encodeIfPresent(first, forKey: .firstSegment)
                try container.encodeIfPresent(last, forKey: .lastSegment)
            case .offset(let seconds):
                try container.encode("offset", forKey: .kind)
                try container.encode(seconds, forKey: .seconds)
            }
        }

        private var kind: String {
            switch self {
            case .unreadable: "unreadable"
            case .noTimedID3: "no_timed_id3"
            case .missing: "missing"
            case .extra: "extra"
            case .offset: "offset"
            }
        }
    }

    enum CodingKeys: String, CodingKey { case source, frame = "frame_seconds", renditions, passed }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encode(frame, forKey: .frame)
        try container.encode(renditions, forKey: .renditions)
        try container.encode(passed, forKey: .passed)
    }

    /// Every rendition passed.
    public var passed: Bool { renditions.allSatisfy(\.passed) }

    /// The frame rate offsets are judged against when no rendition declares one.
    public static let defaultFrameRate = 24.0

    /// `renditions` of `source` compared. The frame is the longest of their declared frame rates'.
    public init(source: String, renditions given: [RenditionTags]) {
        self.source = source
        let rates = given.compactMap(\.frameRate).filter { $0 > 0 && $0.isFinite }
        let frame = 1 / (rates.min() ?? Self.defaultFrameRate)
        self.frame = frame
        let frameTicks = Int64((frame * Double(PTS.clockRate)).rounded())
        let renditions = given.map { $0.placed() }
        let read = renditions.filter(\.readable)
        let carryingGroups = Set(read.filter { !$0.firstTimes.isEmpty }.map(\.group))
        let carriers = read.filter { carryingGroups.contains($0.group) && !$0.firstTimes.isEmpty }
        let reference = Self.reference(among: carriers, within: frameTicks)

        // Each tag: how many carriers cover its time, how many carry it, and its time.
        var tagTime: [String: Int64] = [:]
        for rendition in [reference].compactMap({ $0 }) + carriers {
            for (id, pts) in rendition.firstTimes where tagTime[id] == nil { tagTime[id] = pts }
        }
        var covering: [String: Int] = [:], carrying: [String: Int] = [:]
        for (id, pts) in tagTime {
            for rendition in carriers where rendition.covers(pts) {
                covering[id, default: 0] += 1
                if rendition.firstTimes[id] != nil { carrying[id, default: 0] += 1 }
            }
        }
        func isCommon(_ id: String) -> Bool { 2 * carrying[id, default: 0] >= covering[id, default: 0] }

        self.renditions = renditions.map { rendition in
            var row = Row(name: rendition.name, group: rendition.group, bandwidth: rendition.bandwidth, readable: rendition.readable,
                          tags: rendition.firstTimes.count, groupCarriesNone: !carryingGroups.contains(rendition.group), faults: [])
            guard rendition.readable else {
                row.faults = [.unreadable]
                return row
            }
            guard !row.groupCarriesNone else { return row }
            guard !rendition.firstTimes.isEmpty else {
                // Tags without a PTS are tags: there is no time to compare them by.
                row.faults = rendition.unplacedTags > 0 ? [] : [.noTimedID3]
                return row
            }
            let missing = tagTime.filter { id, pts in rendition.firstTimes[id] == nil && rendition.covers(pts) && isCommon(id) }
            if !missing.isEmpty {
                let places = missing.values.sorted { PTS.isBefore($0, $1) }.map(rendition.segment(at:))
                row.faults.append(.missing(count: missing.count, firstSegment: places.first ?? nil, lastSegment: places.last ?? nil))
            }
            var counted = Set<String>()
            let extra = rendition.tags.filter { tag in !isCommon(tag.id) && counted.insert(tag.id).inserted }
            if !extra.isEmpty {
                row.faults.append(.extra(count: extra.count, firstSegment: extra.first?.segment, lastSegment: extra.last?.segment))
            }
            if let reference {
                row.offset = Self.medianOffset(of: rendition, from: reference)
                if let offset = row.offset, abs(offset) > frame + 1e-9 { row.faults.append(.offset(seconds: offset)) }
            }
            return row
        }
    }

    /// The carrier whose tag times the most others agree with (within a frame); ties go to the
    /// one with the most tags, then to the first.
    private static func reference(among carriers: [RenditionTags], within frame: Int64) -> RenditionTags? {
        var best: (rendition: RenditionTags, agreeing: Int)?
        for rendition in carriers {
            let agreeing = carriers.filter { other in
                guard let offset = medianTicks(of: other, from: rendition) else { return false }
                return abs(offset) <= frame
            }.count
            if let current = best, current.agreeing > agreeing
                || current.agreeing == agreeing && current.rendition.firstTimes.count >= rendition.firstTimes.count { continue }
            best = (rendition, agreeing)
        }
        return best?.rendition
    }

    private static func medianTicks(of rendition: RenditionTags, from reference: RenditionTags) -> Int64? {
        let distances = rendition.firstTimes.compactMap { id, pts in reference.firstTimes[id].map { PTS.distance(from: $0, to: pts) } }.sorted()
        return distances.isEmpty ? nil : distances[distances.count / 2]
    }

    private static func medianOffset(of rendition: RenditionTags, from reference: RenditionTags) -> Double? {
        medianTicks(of: rendition, from: reference).map(PTS.seconds)
    }
}

/// One rendition's Nielsen tags and the media it read, as a scan of it found them: what
/// `RenditionComparison` compares.
package struct RenditionTags: Sendable {
    /// A tag: its payload identity, PTS and segment.
    public struct Tag: Sendable, Equatable {
        public var id: String
        public var pts: Int64
        public var segment: String?
    }

    /// A segment read: where its media starts and how long it lasts.
    public struct Segment: Sendable, Equatable {
        public var uri: String
        public var startPTS: Int64
        public var duration: Double
    }

    public var name: String
    /// What it is compared within: `variant` or `audio` (HLS), a content type (DASH).
    public var group: String
    public var bandwidth: Int?
    public var frameRate: Double?
    /// Anything of it was read.
    public var readable = true
    public private(set) var tags: [Tag] = []
    /// Each tag's first PTS, by identity.
    public private(set) var firstTimes: [String: Int64] = [:]
    public private(set) var segments: [Segment] = []
    /// Tags without a PTS: they cannot be placed, so the rendition is not judged by time, but
    /// it does carry tags.
    public private(set) var unplacedTags = 0

    /// Past this many tags (11 days at a tag a second) neither tags nor segments are kept: the
    /// comparison covers the media up to there.
    public static let maximumTags = 1_000_000

    public init(name: String, group: String, bandwidth: Int? = nil, frameRate: Double? = nil) {
        self.name = name
        self.group = group
        self.bandwidth = bandwidth
        self.frameRate = frameRate
    }

    /// A Nielsen tag read at `pts` (one without a PTS cannot be placed, and is not compared).
    public mutating func add(tag id: String, pts: Int64?, segment: String?) {
        guard let pts else {
            unplacedTags += 1
            return
        }
        guard tags.count < Self.maximumTags else { return }
        tags.append(Tag(id: id, pts: pts, segment: segment))
        if firstTimes[id] == nil { firstTimes[id] = pts }
    }

    /// A segment read, or a part of one (its media from `startPTS`); one without a start is not placed.
    public mutating func add(segment uri: String, startPTS: Int64?, duration: Double?) {
        guard let startPTS, let duration, duration > 0, duration.isFinite, tags.count < Self.maximumTags,
              segments.count < Self.maximumTags else { return }
        segments.append(Segment(uri: uri, startPTS: startPTS, duration: duration))
    }

    /// This rendition with its segments in PTS order, for `segment(at:)` to search.
    func placed() -> RenditionTags {
        var sorted = self
        sorted.segments.sort { PTS.isBefore($0.startPTS, $1.startPTS) }
        return sorted
    }

    /// Whether the media read covers `pts`: every time, when no segment could be placed (a
    /// single file, or segments without a first PTS).
    func covers(_ pts: Int64) -> Bool {
        segments.isEmpty || segment(at: pts) != nil
    }

    /// The segment whose media holds `pts`: the last to start at or before it, if it lasts that
    /// long (`segments` in PTS order, `placed()`).
    func segment(at pts: Int64) -> String? {
        var low = 0, high = segments.count
        while low < high {
            let middle = (low + high) / 2
            if PTS.distance(from: segments[middle].startPTS, to: pts) >= 0 { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let candidate = segments[low - 1]
        return Double(PTS.distance(from: candidate.startPTS, to: pts)) < candidate.duration * Double(PTS.clockRate) ? candidate.uri : nil
    }
}

extension RenditionTags {
    /// What an event of the rendition's scan adds: its Nielsen tags, and the media its segments hold.
    public mutating func add(_ event: MediaEvent) {
        switch event {
        case .tag(let timed):
            for tag in timed.nielsenTags {
                add(tag: TagIdentity.of(payload: tag.payload), pts: timed.pts, segment: timed.origin.segment?.uri)
            }
        case .segment(let segment):
            add(segment: segment.uri, startPTS: segment.startPTS, duration: segment.duration)
        default:
            break
        }
    }
}
