import Foundation
import ID3MeterCore

/// The QA report as a person reads it: each source's findings with their times, then totals
/// and the checks that failed.
extension QAReport {
    /// The report for people: totals, the checks, then each source's findings.
    package func text() -> String {
        var lines = ["Nielsen ID3 tag QA report"]
        if let incomplete { lines.append("INCOMPLETE: \(incomplete)") }
        for source in sources {
            lines.append("")
            lines.append("== \(source.source)")
            lines += source.textLines.map { "  " + $0 }
        }
        for comparison in renditions {
            lines.append("")
            lines.append("== Renditions of \(comparison.source): " + (comparison.passed ? "the same tags" : "they differ"))
            lines += comparison.textLines.map { "  " + $0 }
        }
        lines.append("")
        lines.append("== Total: \(total.sources) source\(total.sources == 1 ? "" : "s")")
        lines.append("  \(total.nielsenTags) Nielsen tags in \(total.id3Tags) ID3 tags: \(total.validTags) valid, "
                     + "\(total.nielsenTags - total.validTags) invalid\(Self.reasons(total.invalidByReason)); "
                     + "\(total.dataTags) DATA, \(total.infoTags) INFO; "
                     + "\(total.placeholderTags) DATA with placeholder PC CID; \(total.duplicates) duplicates")
        lines.append("  DATA tags of one stream: \(total.shortGaps) under 4 s apart, \(total.longGaps) over 12 s, \(total.timeGaps) over 19 s"
                     + (total.longestGap.map { String(format: ", longest %.3f s", $0) } ?? "")
                     + "; \(total.discontinuities) PTS discontinuities")
        lines.append("  segments: \(total.segments), \(total.segmentsWithoutTags) without any Nielsen tag; "
                     + "\(total.malformedPackets) malformed ID3 packets")
        if !total.unreadableSources.isEmpty { lines.append("  unreadable: " + total.unreadableSources.joined(separator: ", ")) }
        let failed = failedChecks
        lines.append(failed.isEmpty ? "Checks: all passed"
                     : "Checks failed: " + failed.keys.sorted().map { "\($0) (\(failed[$0]!.count) source\(failed[$0]!.count == 1 ? "" : "s"))" }
                        .joined(separator: ", "))
        return lines.joined(separator: "\n") + "\n"
    }

    static func reasons(_ counts: [String: Int]) -> String {
        counts.isEmpty ? "" : " (" + counts.keys.sorted().map { "\($0): \(counts[$0]!)" }.joined(separator: ", ") + ")"
    }
}

extension SourceReport {
    var textLines: [String] {
        var lines: [String] = []
        lines += failures.map { "read error: \($0)" }
        lines += warnings.map { "warning: \($0)" }
        lines.append("\(nielsenTags) Nielsen tags in \(id3Tags) ID3 tags: \(validTags) valid, "
                     + "\(nielsenTags - validTags) invalid\(QAReport.reasons(invalidByReason))"
                     + (segments > 0 ? "; \(segments) segment\(segments == 1 ? "" : "s")" : ""))
        lines.append("\(dataTags) DATA tags, \(infoTags) INFO tags" + (streams.isEmpty ? "" : " on " + streams.joined(separator: ", "))
                     + (infoTagInterval.map { String(format: "; INFO tags %.1f to %.1f s apart", $0.lowerBound, $0.upperBound) } ?? ""))
        lines.append(longestGap.map { String(format: "longest DATA spacing %.3f s, ending at %@", $0.seconds, $0.at.place) }
                     ?? "longest DATA spacing: none")
        lines.append("checks, in the terms of Nielsen's ID3 Tag Validator (user guide 1.8F):")
        lines += checks.map { check in
            "  " + (check.test.map { "test \($0) " } ?? "") + "\(check.name): \(check.result) - \(check.basis)"
        }
        let sections: [(String, [Finding])] = [
            ("invalid tag", invalidTags), ("structure", structure), ("placeholder PC CID", placeholderTags),
            ("placeholder run", placeholderRuns), ("duplicate", duplicates),
            ("DATA tags under 4 s apart", shortGaps.map(\.at)), ("DATA tags over 12 s apart", longGaps.map(\.at)),
            ("DATA tags over 19 s apart", timeGaps.map(\.at)), ("INFO tag late", lateInfoTags), ("offset", offsetErrors),
            ("PTS discontinuity", discontinuities), ("malformed ID3", malformedPackets),
        ]
        for (title, findings) in sections {
            lines += findings.map { "\(title) at \($0.place): \($0.detail)" }
        }
        lines += segmentsWithoutTags.map { "segment without any Nielsen tag: \($0)" }
        lines += recoveries.keys.sorted().map { "read leniently (\(recoveries[$0]!)): \($0)" }
        lines += omitted.keys.sorted().map { "\(omitted[$0]!) more \($0) not listed (each list keeps \(SourceReport.keptFindings))" }
        return lines
    }
}

extension RenditionComparison {
    /// A line per rendition: what it is, its tags, and what is wrong with it.
    var textLines: [String] {
        renditions.map { row in
            let bandwidth = row.bandwidth.map { ", \($0) bit/s" } ?? ""
            let verdict = row.faults.isEmpty ? (row.groupCarriesNone ? "no tags (nor any \(row.group) rendition: they ride elsewhere)" : "ok")
                : "FAIL: " + row.faults.map { words(for: $0, in: row) }.joined(separator: "; ")
            return "\(row.name) (\(row.group)\(bandwidth)): \(row.tags) tag\(row.tags == 1 ? "" : "s")"
                + (row.offset.map { String(format: ", offset %+.3f s", $0) } ?? "") + " - " + verdict
        }
    }

    /// What is wrong with a rendition, in words.
    package func words(for fault: Fault, in row: Row) -> String {
        func segments(_ first: String?, _ last: String?) -> String {
            guard let first else { return "" }
            return first == last || last == nil ? " (segment \(Location.name(first)))"
                : " (segments \(Location.name(first)) to \(Location.name(last!)))"
        }
        return switch fault {
        case .unreadable: "could not be read"
        case .noTimedID3: "no Nielsen tag at all, while other \(row.group) renditions carry them"
        case .missing(let count, let first, let last):
            "\(count) tag\(count == 1 ? "" : "s") the other renditions carry missing\(segments(first, last))"
        case .extra(let count, let first, let last):
            "\(count) tag\(count == 1 ? "" : "s") the other renditions lack\(segments(first, last))"
        case .offset(let seconds):
            String(format: "tags %.3f s %@ the other renditions' (more than a frame, %.3f s)", abs(seconds),
                   seconds > 0 ? "after" : "before", frame)
        }
    }
}

extension Finding {
    /// "12.345 s (pts 1111050, 2026-11-21T10:00:12.345Z, seg3.ts)".
    var place: String {
        let details = [pts.map { "pts \($0)" }, programDateTime, segment.map(Location.name)].compactMap { $0 }
        return (time.map { String(format: "%.3f s", $0) } ?? "no PTS") + (details.isEmpty ? "" : " (" + details.joined(separator: ", ") + ")")
    }
}
