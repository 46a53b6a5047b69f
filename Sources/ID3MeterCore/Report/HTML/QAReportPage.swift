import Foundation

extension QAReport {
    /// The report as one self-contained HTML page, the form `--report FILE.html` writes: the
    /// totals and a summary table on top, then each source's timeline (sources whose report
    /// was built without one show their summary alone).
    public func html(generated: Date = Date()) -> String {
        let page = Page(version: ID3MeterVersion.current, generated: ProgramDateTime.format(generated), total: total,
                        failedChecks: failedChecks, sources: sources.map(Page.Source.init), incomplete: incomplete)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ProgramDateTime.format(date))
        }
        let data = (try? encoder.encode(page)) ?? Data("{}".utf8)
        return TimelinePage.report(title: "Nielsen tag QA report", data: data)
    }

    /// What the page's script draws: the JSON report's totals and, per source, its summary and timeline.
    private struct Page: Encodable {
        struct Source: Encodable {
            var source: String
            var readable: Bool
            var nielsenTags: Int
            var validTags: Int
            var invalidByReason: [String: Int]
            var placeholderTags: Int
            var longestGapSeconds: Double?
            var failedChecks: [String]
            var failures: [String]
            var warnings: [String]
            var timeline: TagTimeline?

            init(_ report: SourceReport) {
                source = report.source
                readable = report.readable
                nielsenTags = report.nielsenTags
                validTags = report.validTags
                invalidByReason = report.invalidByReason
                placeholderTags = report.total(.placeholderTags, kept: report.placeholderTags.count)
                longestGapSeconds = report.longestGap?.seconds
                failedChecks = report.failedChecks
                failures = report.failures
                warnings = report.warnings
                timeline = report.timeline
            }

            enum CodingKeys: String, CodingKey {
                case source, readable, nielsenTags = "nielsen_tags", validTags = "valid_tags", invalidByReason = "invalid_by_reason"
                case placeholderTags = "placeholder_tags", longestGapSeconds = "longest_gap_seconds", failedChecks = "failed_checks"
                case failures, warnings, timeline
            }
        }

        var version: String
        var generated: String
        var total: Totals
        var failedChecks: [String: [String]]
        var sources: [Source]
        var incomplete: String?

        enum CodingKeys: String, CodingKey { case version, generated, total, failedChecks = "failed_checks", sources, incomplete }
    }
}
