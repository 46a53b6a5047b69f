import FoundationEssentials

/// The Nielsen tag QA report over a batch: one section per source, totals, and the checks.
package struct QAReport: Encodable, Sendable {
    /// The sums over every source; lists kept short in each source's report are counted whole here.
    public struct Totals: Encodable, Sendable {
        public var sources = 0
        public var unreadableSources: [String] = []
        public var id3Tags = 0
        public var nielsenTags = 0
        public var validTags = 0
        public var dataTags = 0
        public var infoTags = 0
        public var invalidByReason: [String: Int] = [:]
        public var placeholderTags = 0
        public var duplicates = 0
        public var shortGaps = 0
        public var longGaps = 0
        public var timeGaps = 0
        public var longestGap: Double?
        public var discontinuities = 0
        public var segments = 0
        public var segmentsWithoutTags = 0
        public var malformedPackets = 0

        enum CodingKeys: String, CodingKey {
            case sources, unreadableSources = "unreadable_sources", id3Tags = "id3_tags", nielsenTags = "nielsen_tags"
            case validTags = "valid_tags", dataTags = "data_tags", infoTags = "info_tags", timeGaps = "time_gaps", invalidByReason = "invalid_by_reason", placeholderTags = "placeholder_tags"
            case duplicates, shortGaps = "short_gaps", longGaps = "long_gaps", longestGap = "longest_gap_seconds"
            case discontinuities, segments, segmentsWithoutTags = "segments_without_tags", malformedPackets = "malformed_packets"
        }
    }

    public private(set) var sources: [SourceReport] = []
    public private(set) var total = Totals()
    /// Each presentation whose renditions were all read (`scan --all-renditions`), compared.
    public private(set) var renditions: [RenditionComparison] = []
    /// Why the report covers less than was asked (a scan stopped by a signal), in words; `nil`
    /// when it is whole.
    public var incomplete: String?

    enum CodingKeys: String, CodingKey { case sources, total, renditions, failedChecks = "failed_checks", incomplete }

    /// An empty report: add each source's report with `add(_:)`.
    public init() {}

    /// Checks any source fails, with the sources failing each (`renditions`: the presentations
    /// whose renditions differ).
    public var failedChecks: [String: [String]] {
        var failed: [String: [String]] = [:]
        for source in sources {
            for check in source.failedChecks { failed[check, default: []].append(source.source) }
        }
        for comparison in renditions where !comparison.passed { failed[Self.renditionsCheck, default: []].append(comparison.source) }
        return failed
    }

    /// The check that fails when a presentation's renditions differ in their tags.
    public static let renditionsCheck = "renditions"

    /// Adds the comparison of one presentation's renditions.
    public mutating func add(_ comparison: RenditionComparison) {
        renditions.append(comparison)
    }

    /// Every check passed for every source; `scan --strict` exits 3 when not.
    public var passed: Bool { failedChecks.isEmpty }

    /// Adds one source's findings, in the order sources are reported.
    public mutating func add(_ source: SourceReport) {
        sources.append(source)
        total.sources += 1
        if !source.readable { total.unreadableSources.append(source.source) }
        total.id3Tags += source.id3Tags
        total.nielsenTags += source.nielsenTags
        total.validTags += source.validTags
        total.dataTags += source.dataTags
        total.infoTags += source.infoTags
        total.timeGaps += source.total(.timeGaps, kept: source.timeGaps.count)
        total.invalidByReason.merge(source.invalidByReason, uniquingKeysWith: +)
        total.placeholderTags += source.placeholderTagCount
        total.duplicates += source.total(.duplicates, kept: source.duplicates.count)
        total.shortGaps += source.total(.shortGaps, kept: source.shortGaps.count)
        total.longGaps += source.total(.longGaps, kept: source.longGaps.count)
        if let gap = source.longestGap?.seconds { total.longestGap = max(total.longestGap ?? gap, gap) }
        total.discontinuities += source.total(.discontinuities, kept: source.discontinuities.count)
        total.segments += source.segments
        total.segmentsWithoutTags += source.total(.segmentsWithoutTags, kept: source.segmentsWithoutTags.count)
        total.malformedPackets += source.total(.malformedPackets, kept: source.malformedPackets.count)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sources, forKey: .sources)
        try container.encode(total, forKey: .total)
        if !renditions.isEmpty { try container.encode(renditions, forKey: .renditions) }
        try container.encode(failedChecks, forKey: .failedChecks)
        try container.encodeIfPresent(incomplete, forKey: .incomplete)
    }

    /// The report as pretty-printed JSON with sorted keys, the form `--report FILE.json` writes.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
