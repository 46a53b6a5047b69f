import ID3MeterCore

/// The alerts of a channel's records as stretches of time: each from the record that started it
/// to the one that ended it, per meter. An alert started again while open (a restarted meter
/// raising it anew, `failing_checks` naming other checks) closes the old stretch and opens one.
/// One that ends without a start seen began before the records read; one still open runs on,
/// until its meter starts again (engine event 2001): a meter that died with an alert open, and
/// was started afresh, raises what is still true anew.
package struct AlertSpans: Sendable {
    package struct Span: Sendable {
        var name: String
        var meter: String
        var message: String?
        var from: Double
        var to: Double
    }

    private(set) var spans: [Span] = []

    /// The spans as each of `ends` (in order) finds them: of the records made before it, in
    /// one pass over `records` (in the order they were made, read from `since`). A month's
    /// report asks for each of its days.
    package static func asOf(_ records: [MeterRecord], since: Double, ends: [Double]) -> [AlertSpans] {
        // An alert is one meter's, of one name (and output, for an output's alerts).
        struct Key: Hashable { var meter: String, name: String, output: String }
        var closed: [Span] = []
        var open: [Key: Span] = [:]
        var next = records.startIndex
        return ends.map { end in
            while next < records.endIndex, records[next].sentAt < end {
                let record = records[next]
                next += 1
                if case .event(let event) = record.content, event.code == 2001 {
                    let meter = record.meter ?? ""
                    for (key, var started) in open where started.meter == meter {
                        started.to = record.sentAt
                        closed.append(started)
                        open[key] = nil
                    }
                }
                guard case .alert(let alert) = record.content else { continue }
                let meter = record.meter ?? ""
                let key = Key(meter: meter, name: alert.name, output: alert.output ?? "")
                if var started = open.removeValue(forKey: key) {
                    started.to = record.sentAt
                    closed.append(started)
                } else if !alert.active {
                    closed.append(Span(name: alert.name, meter: meter, message: nil, from: since, to: record.sentAt))
                }
                if alert.active {
                    open[key] = Span(name: alert.name, meter: meter, message: alert.message, from: record.sentAt, to: .infinity)
                }
            }
            var spans = AlertSpans()
            spans.spans = (closed + open.values).sorted { ($0.from, $0.name, $0.meter) < ($1.from, $1.name, $1.meter) }
            return spans
        }
    }

    /// The spans of `name` that overlap `from...to`.
    func overlapping(_ name: String, _ from: Double, _ to: Double) -> [Span] {
        spans.filter { $0.name == name && $0.from < to && $0.to > from }
    }
}
