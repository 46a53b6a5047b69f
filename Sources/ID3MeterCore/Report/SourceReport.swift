import Foundation

/// Something the QA report points at: where in the stream, and what.
public struct Finding: Encodable, Sendable, Equatable {
    public var pts: Int64?
    /// `pts` in seconds.
    public var time: Double?
    public var programDateTime: String?
    public var segment: String?
    public var detail: String

    enum CodingKeys: String, CodingKey { case pts, time, programDateTime = "program_date_time", segment, detail }
}

/// The time between two consecutive Nielsen tags.
public struct Gap: Encodable, Sendable, Equatable {
    public var seconds: Double
    /// The tag that ends the gap.
    public var at: Finding
}

/// The QA findings for one input (a file, or a playlist with its segments).
public struct SourceReport: Encodable, Sendable {
    /// Nielsen's ID3 Tag Validator flags gaps under 4 s and over 12 s.
    public static let shortGap = 4.0
    /// Longer than this between two tags is a long gap: audience not credited.
    public static let longGap = 12.0
    /// Each list keeps this many entries; the rest are counted in `omitted`, so that a report's
    /// memory does not grow with its input.
    public static let keptFindings = 1_000

    public var source: String
    /// False when the input itself could not be read (a failure that names no segment).
    public var readable = true
    /// The first few of each kind, then one line per kind saying how many more (`ProblemTally`).
    public var failures: [String] = []
    public var warnings: [String] = []
    /// ID3 tags of any owner; `nielsenTags` are the Nielsen PRIV frames among them.
    public var id3Tags = 0
    public var malformedPackets: [Finding] = []
    public var nielsenTags = 0
    public var validTags = 0
    /// Invalid tags by issue code (a tag with two issues counts under both).
    public var invalidByReason: [String: Int] = [:]
    public var invalidTags: [Finding] = []
    public var placeholderTags: [Finding] = []
    public var duplicates: [Finding] = []
    public var shortGaps: [Gap] = []
    public var longGaps: [Gap] = []
    public var longestGap: Gap?
    public var discontinuities: [Finding] = []
    public var segments = 0
    public var segmentsWithoutTags: [String] = []
    /// Entries left out of each list past `keptFindings`, by the list's key.
    public var omitted: [String: Int] = [:]
    /// Tags read around something wrong (a cut end, garbage after the frames, a reading other than
    /// the spec's, a frame not decoded...), by kind: every recovery is counted, none is silent.
    public var recoveries: [String: Int] = [:]
    /// The tags in time, for the HTML report, when the builder recorded them; not in the JSON report.
    public var timeline: TagTimeline?

    enum CodingKeys: String, CodingKey {
        case source, readable, failures, warnings, omitted, recoveries, id3Tags = "id3_tags", malformedPackets = "malformed_packets"
        case nielsenTags = "nielsen_tags", validTags = "valid_tags", invalidByReason = "invalid_by_reason"
        case invalidTags = "invalid_tags", placeholderTags = "placeholder_tags", duplicates
        case shortGaps = "short_gaps", longGaps = "long_gaps", longestGap = "longest_gap", discontinuities
        case segments, segmentsWithoutTags = "segments_without_tags"
    }

    public init(source: String) { self.source = source }

    /// How many entries the list under `key` had, kept and omitted.
    func total(_ key: CodingKeys, kept: Int) -> Int { kept + omitted[key.stringValue, default: 0] }

    /// The checks this source fails, by name; placeholders and discontinuities inform but do not fail.
    public var failedChecks: [String] {
        var failed: [String] = []
        if !readable || !failures.isEmpty { failed.append("read_errors") }
        if readable && nielsenTags == 0 { failed.append("no_nielsen_tags") }
        // Counted, not listed: a builder that lists nothing (no report to write) counts it all.
        if total(.invalidTags, kept: invalidTags.count) > 0 { failed.append("invalid_tags") }
        if total(.duplicates, kept: duplicates.count) > 0 { failed.append("duplicates") }
        if total(.shortGaps, kept: shortGaps.count) > 0 { failed.append("short_gaps") }
        if total(.longGaps, kept: longGaps.count) > 0 { failed.append("long_gaps") }
        if total(.segmentsWithoutTags, kept: segmentsWithoutTags.count) > 0 { failed.append("segments_without_tags") }
        if total(.malformedPackets, kept: malformedPackets.count) > 0 { failed.append("malformed_packets") }
        return failed
    }
}

/// Builds a `SourceReport` from one source's scan events, in stream order.
public struct SourceReportBuilder {
    private var built: SourceReport
    private var failures = ProblemTally()
    private var warnings = ProblemTally()
    private var seenPayloads = SeenPayloads()
    /// Entries past `keptFindings`, by list (`omittedSlot`), folded into the report's `omitted`
    /// when it is read: with a tag every second, every tag is a short gap, and looking the list up
    /// by key path and counting it by name cost more than the gap.
    private var omittedCounts = [Int](repeating: 0, count: keptLists.count)
    private var spacing = TagSpacing()
    private var nielsenInSegment = 0
    /// The source's tags in time, for the HTML report; `nil` when not asked for.
    public private(set) var timeline: TimelineRecorder?

    /// Findings listed per kind: `keptFindings`, or none when no report will be written (then
    /// every finding is only counted, and none has its times formatted: that cost a scan of many
    /// short files more than reading their tags).
    private let listed: Int

    /// A builder for the report on `source`; with `timeline`, it also records the tags' timeline.
    /// Without `listingFindings`, findings are counted but not listed.
    public init(source: String, timeline: TimelineRecorder? = nil, listingFindings: Bool = true) {
        built = SourceReport(source: source)
        self.timeline = timeline
        listed = listingFindings ? SourceReport.keptFindings : 0
    }

    /// The report so far, with a line for each kind of failure or warning past the first few.
    public var report: SourceReport {
        var failures = failures, warnings = warnings, report = built
        for key in Self.keptLists where omittedCounts[Self.omittedSlot(key)] > 0 {
            report.omitted[key.stringValue, default: 0] += omittedCounts[Self.omittedSlot(key)]
        }
        report.failures += failures.summaries()
        report.warnings += warnings.summaries()
        report.timeline = timeline?.timeline
        return report
    }

    /// Takes the next event of the source, in stream order: tags, segment ends and problems.
    public mutating func add(_ event: MediaEvent) {
        timeline?.add(event)
        switch event {
        case .opened, .resumed:
            break
        case .tag(let timed):
            built.id3Tags += 1
            for note in timed.tag.notes { built.recoveries[ProblemTally.kind(of: note), default: 0] += 1 }
            for frame in timed.tag.frames {
                if case .skipped(let reason) = frame.content { built.recoveries["frame not decoded: \(reason)", default: 0] += 1 }
            }
            for nielsen in timed.nielsenTags { add(nielsen, timed) }
        case .segment(let segment):
            built.segments += 1
            if nielsenInSegment == 0 { keep(segment.uri, in: \.segmentsWithoutTags, .segmentsWithoutTags) }
            nielsenInSegment = 0
        case .malformed(let error, let pts, let origin):
            keep(Self.finding(pts: pts, origin: origin, date: nil, detail: error.description), in: \.malformedPackets, .malformedPackets)
        case .failure(let failure):
            if failures.admit(failure.description) { built.failures.append(failure.description) }
            if failure.segment == nil { built.readable = false }
        case .warning(let warning):
            if warnings.admit(warning.description) { built.warnings.append(warning.description) }
        }
    }

    private mutating func add(_ nielsen: NielsenTag, _ timed: TimedTag) {
        built.nielsenTags += 1
        nielsenInSegment += 1
        // Made only for a finding that is kept: formatting its times costs more than reading the tag.
        func here(_ detail: String) -> Finding {
            Self.finding(pts: timed.pts, origin: timed.origin, date: timed.programDateTime, detail: detail)
        }
        if nielsen.isValid {
            built.validTags += 1
        } else {
            nielsen.issues.forEach { built.invalidByReason[$0.code, default: 0] += 1 }
            keep(here(nielsen.issues.map(\.description).joined(separator: "; ")), in: \.invalidTags, .invalidTags)
        }
        if nielsen.hasPlaceholderPCCID { keep(here("placeholder PC CID"), in: \.placeholderTags, .placeholderTags) }
        if !seenPayloads.insert(nielsen.payload) { keep(here("same payload as an earlier tag"), in: \.duplicates, .duplicates) }
        switch spacing.step(pts: timed.pts, discontinuitySequence: timed.origin.segment?.discontinuitySequence) {
        case .none:
            break
        case .discontinuity:
            keep(here("EXT-X-DISCONTINUITY before this tag"), in: \.discontinuities, .discontinuities)
        case .jump(let seconds):
            keep(here(String(format: "PTS jumps %+.3f s", seconds)), in: \.discontinuities, .discontinuities)
        case .gap(let seconds):
            func gap() -> Gap { Gap(seconds: seconds, at: here(String(format: "%.3f s since the previous Nielsen tag", seconds))) }
            if seconds < SourceReport.shortGap { keep(gap(), in: \.shortGaps, .shortGaps) }
            if seconds > SourceReport.longGap { keep(gap(), in: \.longGaps, .longGaps) }
            if seconds > built.longestGap?.seconds ?? -1 { built.longestGap = gap() }
        }
    }

    private mutating func keep<T>(_ entry: @autoclosure () -> T, in list: WritableKeyPath<SourceReport, [T]>,
                                  _ key: SourceReport.CodingKeys) {
        let slot = Self.omittedSlot(key)
        if omittedCounts[slot] == 0, built[keyPath: list].count < listed {
            built[keyPath: list].append(entry())
        } else {
            omittedCounts[slot] += 1
        }
    }

    /// The lists that keep their first `keptFindings` entries; a list's place here is its slot in `omittedCounts`.
    private static let keptLists: [SourceReport.CodingKeys] = [
        .segmentsWithoutTags, .malformedPackets, .invalidTags, .placeholderTags, .duplicates, .discontinuities, .shortGaps, .longGaps,
    ]

    private static func omittedSlot(_ key: SourceReport.CodingKeys) -> Int { keptLists.firstIndex(of: key) ?? keptLists.count - 1 }

    private static func finding(pts: Int64?, origin: TagOrigin, date: Date?, detail: String) -> Finding {
        Finding(pts: pts, time: pts.map(PTS.seconds), programDateTime: date.map(ProgramDateTime.format),
                segment: origin.segment?.uri, detail: detail)
    }
}

