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
    public static let longGap = 12.0
    /// A step back larger than this, or forward larger than `forwardJump`, is a PTS discontinuity.
    static let backwardJump = 1.0
    static let forwardJump = 600.0

    public var source: String
    public var readable = true
    public var failures: [String] = []
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

    enum CodingKeys: String, CodingKey {
        case source, readable, failures, id3Tags = "id3_tags", malformedPackets = "malformed_packets"
        case nielsenTags = "nielsen_tags", validTags = "valid_tags", invalidByReason = "invalid_by_reason"
        case invalidTags = "invalid_tags", placeholderTags = "placeholder_tags", duplicates
        case shortGaps = "short_gaps", longGaps = "long_gaps", longestGap = "longest_gap", discontinuities
        case segments, segmentsWithoutTags = "segments_without_tags"
    }

    public init(source: String) { self.source = source }

    /// The checks this source fails, by name; placeholders and discontinuities inform but do not fail.
    public var failedChecks: [String] {
        var failed: [String] = []
        if !readable || !failures.isEmpty { failed.append("read_errors") }
        if readable && nielsenTags == 0 { failed.append("no_nielsen_tags") }
        if !invalidTags.isEmpty { failed.append("invalid_tags") }
        if !duplicates.isEmpty { failed.append("duplicates") }
        if !shortGaps.isEmpty { failed.append("short_gaps") }
        if !longGaps.isEmpty { failed.append("long_gaps") }
        if !segmentsWithoutTags.isEmpty { failed.append("segments_without_tags") }
        if !malformedPackets.isEmpty { failed.append("malformed_packets") }
        return failed
    }
}

/// Builds a `SourceReport` from one source's scan events, in stream order.
public struct SourceReportBuilder {
    public private(set) var report: SourceReport
    private var seenPayloads = Set<String>()
    private var previous: (pts: Int64, discontinuitySequence: Int?)?
    private var nielsenInSegment = 0

    public init(source: String) { report = SourceReport(source: source) }

    public mutating func add(_ event: ScanEvent) {
        switch event {
        case .tag(let timed):
            report.id3Tags += 1
            for nielsen in timed.nielsenTags { add(nielsen, timed) }
        case .segment(let segment):
            report.segments += 1
            if nielsenInSegment == 0 { report.segmentsWithoutTags.append(segment.uri) }
            nielsenInSegment = 0
        case .malformed(let error, let pts, let origin):
            report.malformedPackets.append(finding(pts: pts, origin: origin, date: nil, detail: error.description))
        case .failure(let failure):
            report.failures.append(failure.description)
            if failure.segment == nil { report.readable = false }
        }
    }

    private mutating func add(_ nielsen: NielsenTag, _ timed: TimedTag) {
        report.nielsenTags += 1
        nielsenInSegment += 1
        let here = finding(pts: timed.pts, origin: timed.origin, date: timed.programDateTime, detail: "")
        if nielsen.isValid {
            report.validTags += 1
        } else {
            nielsen.issues.forEach { report.invalidByReason[$0.code, default: 0] += 1 }
            report.invalidTags.append(here.with(nielsen.issues.map(\.description).joined(separator: "; ")))
        }
        if nielsen.hasPlaceholderPCCID { report.placeholderTags.append(here.with("placeholder PC CID")) }
        if !seenPayloads.insert(nielsen.payload).inserted { report.duplicates.append(here.with("same payload as an earlier tag")) }
        guard let pts = timed.pts else { return }
        let discontinuity = timed.origin.segment?.discontinuitySequence
        defer { previous = (pts, discontinuity) }
        guard let previous else { return }
        let seconds = PTS.seconds(PTS.distance(from: previous.pts, to: pts))
        if discontinuity != previous.discontinuitySequence {
            report.discontinuities.append(here.with("EXT-X-DISCONTINUITY before this tag"))
        } else if seconds < -SourceReport.backwardJump || seconds > SourceReport.forwardJump {
            report.discontinuities.append(here.with(String(format: "PTS jumps %+.3f s", seconds)))
        } else {
            let gap = Gap(seconds: seconds, at: here.with(String(format: "%.3f s since the previous Nielsen tag", seconds)))
            if seconds < SourceReport.shortGap { report.shortGaps.append(gap) }
            if seconds > SourceReport.longGap { report.longGaps.append(gap) }
            if seconds > report.longestGap?.seconds ?? -1 { report.longestGap = gap }
        }
    }

    private func finding(pts: Int64?, origin: TagOrigin, date: Date?, detail: String) -> Finding {
        Finding(pts: pts, time: pts.map(PTS.seconds), programDateTime: date.map(ProgramDateTime.format),
                segment: origin.segment?.uri, detail: detail)
    }
}

private extension Finding {
    func with(_ detail: String) -> Finding {
        var copy = self
        copy.detail = detail
        return copy
    }
}
