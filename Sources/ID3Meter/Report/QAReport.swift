import Foundation

/// The Nielsen tag QA report over a batch: one section per source, totals, and the checks.
public struct QAReport: Encodable, Sendable {
    public struct Totals: Encodable, Sendable {
        public var sources = 0
        public var unreadableSources: [String] = []
        public var id3Tags = 0
        public var nielsenTags = 0
        public var validTags = 0
        public var invalidByReason: [String: Int] = [:]
        public var placeholderTags = 0
        public var duplicates = 0
        public var shortGaps = 0
        public var longGaps = 0
        public var longestGap: Double?
        public var discontinuities = 0
        public var segments = 0
        public var segmentsWithoutTags = 0
        public var malformedPackets = 0

        enum CodingKeys: String, CodingKey {
            case sources, unreadableSources = "unreadable_sources", id3Tags = "id3_tags", nielsenTags = "nielsen_tags"
            case validTags = "valid_tags", invalidByReason = "invalid_by_reason", placeholderTags = "placeholder_tags"
            case duplicates, shortGaps = "short_gaps", longGaps = "long_gaps", longestGap = "longest_gap_seconds"
            case discontinuities, segments, segmentsWithoutTags = "segments_without_tags", malformedPackets = "malformed_packets"
        }
    }

    public private(set) var sources: [SourceReport] = []
    public private(set) var total = Totals()

    enum CodingKeys: String, CodingKey { case sources, total, failedChecks = "failed_checks" }

    public init() {}

    /// Checks any source fails, with the sources failing each.
    public var failedChecks: [String: [String]] {
        var failed: [String: [String]] = [:]
        for source in sources {
            for check in source.failedChecks { failed[check, default: []].append(source.source) }
        }
        return failed
    }

    public var passed: Bool { failedChecks.isEmpty }

    public mutating func add(_ source: SourceReport) {
        sources.append(source)
        total.sources += 1
        if !source.readable { total.unreadableSources.append(source.source) }
        total.id3Tags += source.id3Tags
        total.nielsenTags += source.nielsenTags
        total.validTags += source.validTags
        total.invalidByReason.merge(source.invalidByReason, uniquingKeysWith: +)
        total.placeholderTags += source.placeholderTags.count
        total.duplicates += source.duplicates.count
        total.shortGaps += source.shortGaps.count
        total.longGaps += source.longGaps.count
        if let gap = source.longestGap?.seconds { total.longestGap = max(total.longestGap ?? gap, gap) }
        total.discontinuities += source.discontinuities.count
        total.segments += source.segments
        total.segmentsWithoutTags += source.segmentsWithoutTags.count
        total.malformedPackets += source.malformedPackets.count
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sources, forKey: .sources)
        try container.encode(total, forKey: .total)
        try container.encode(failedChecks, forKey: .failedChecks)
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
