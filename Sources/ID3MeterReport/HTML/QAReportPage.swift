import Foundation
import ID3MeterCore

extension QAReport {
    /// The report as one self-contained HTML page, the form `--report FILE.html` writes: the
    /// totals and a summary table on top, then each source's timeline (sources whose report
    /// was built without one show their summary alone).
    package func html(generated: Date = Date()) -> String {
        let page = Page(version: ID3MeterVersion.current, generated: ProgramDateTime.format(generated), total: total,
                        failedChecks: failedChecks, checks: Page.CheckSummary.of(sources), sources: sources.map(Page.Source.init),
                        renditions: renditions.map(Page.Ladder.init), incomplete: incomplete)
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
        /// One check over every source: what it judges once, and how many sources had each
        /// status (a source's own row is sent only when it says something: 10,000 sources of
        /// 27 rows each would triple the page).
        struct CheckSummary: Encodable {
            var name: String
            var test: Int?
            var basis: String
            var pass = 0, fail = 0, noStatus = 0

            enum CodingKeys: String, CodingKey { case name, test, basis, pass, fail, noStatus = "no_status" }

            static func of(_ sources: [SourceReport]) -> [CheckSummary] {
                var rows: [CheckSummary] = []
                var index: [String: Int] = [:]
                for source in sources {
                    for check in source.checks {
                        let at = index[check.name] ?? {
                            rows.append(CheckSummary(name: check.name, test: check.test, basis: check.basis))
                            index[check.name] = rows.count - 1
                            return rows.count - 1
                        }()
                        switch check.status {
                        case .pass: rows[at].pass += 1
                        case .fail: rows[at].fail += 1
                        case .noStatus: rows[at].noStatus += 1
                        }
                    }
                }
                return rows
            }
        }

        struct Source: Encodable {
            var source: String
            var readable: Bool
            var nielsenTags: Int
            var validTags: Int
            var invalidByReason: [String: Int]
            var placeholderTags: Int
            var longestGapSeconds: Double?
            var failedChecks: [String]
            /// `name: Fail <9/0/7>` for the rows that failed or found errors they tolerate.
            var checkResults: [String]
            var failures: [String]
            var warnings: [String]
            var timeline: TagTimeline?

            init(_ report: SourceReport) {
                source = report.source
                readable = report.readable
                nielsenTags = report.nielsenTags
                validTags = report.validTags
                invalidByReason = report.invalidByReason
                placeholderTags = report.placeholderTagCount
                longestGapSeconds = report.longestGap?.seconds
                failedChecks = report.failedChecks
                checkResults = report.checks.filter { $0.status == .fail || ($0.tolerated != nil && ($0.count ?? 0) > 0) }
                    .map { "\($0.name): \($0.result)" }
                failures = report.failures
                warnings = report.warnings
                timeline = report.timeline
            }

            enum CodingKeys: String, CodingKey {
                case source, readable, nielsenTags = "nielsen_tags", validTags = "valid_tags", invalidByReason = "invalid_by_reason"
                case placeholderTags = "placeholder_tags", longestGapSeconds = "longest_gap_seconds", failedChecks = "failed_checks"
                case checkResults = "check_results"
                case failures, warnings, timeline
            }
        }

        /// A presentation's renditions compared: a row each, its verdict in words.
        struct Ladder: Encodable {
            struct Row: Encodable {
                var name: String
                /// The source its timeline is drawn under.
                var source: String
                var group: String
                var bandwidth: Int?
                var tags: Int
                var offsetSeconds: Double?
                var passed: Bool
                var verdict: String

                enum CodingKeys: String, CodingKey { case name, source, group, bandwidth, tags, offsetSeconds = "offset_seconds", passed, verdict }
            }

            var source: String
            var passed: Bool
            var rows: [Row]

            init(_ comparison: RenditionComparison) {
                source = comparison.source
                passed = comparison.passed
                rows = comparison.renditions.map { row in
                    Row(name: row.name, source: "\(comparison.source) [\(row.name)]", group: row.group, bandwidth: row.bandwidth, tags: row.tags,
                        offsetSeconds: row.offset, passed: row.passed,
                        verdict: row.faults.isEmpty ? (row.groupCarriesNone ? "no tags in any \(row.group) rendition" : "ok")
                            : row.faults.map { comparison.words(for: $0, in: row) }.joined(separator: "; "))
                }
            }
        }

        var version: String
        var generated: String
        var total: Totals
        var failedChecks: [String: [String]]
        var checks: [CheckSummary]
        var sources: [Source]
        var renditions: [Ladder]
        var incomplete: String?

        enum CodingKeys: String, CodingKey { case version, generated, total, failedChecks = "failed_checks", checks, sources, renditions, incomplete }
    }
}
