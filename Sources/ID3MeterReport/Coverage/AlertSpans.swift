import ID3MeterCore

/// The alerts of a channel's records as stretches of time: each from the record that started it
/// to the one that ended it, per meter. An alert started again while open (a restarted meter
/// raising it anew, `failing_checks` naming other checks) closes the old stretch and opens one.
/// One that ends without a start seen began before the records read; one still open runs on,
/// until its meter starts again (engine event 2001): a meter that died with an alert open, and
/// was started afresh, raises what is still true anew.
struct AlertSpans {
    struct Span {
        var name: String
        var meter: String
        var message: String?
        var from: Double
        var to: Double
    }

    private(set) var spans: [Span] = []

    /// `records` in the order they were made, read from `since`.
    init(_ records: [MeterRecord], since: Double) {
        var open: [String: Span] = [:]
        for record in records {
            if case .event(let event) = record.content, event.code == 2001 {
                let meter = record.meter ?? ""
                for (key, var started) in open where started.meter == meter {
                    started.to = record.sentAt
                    spans.append(started)
                    open[key] = nil
                }
            }
            guard case .alert(let alert) = record.content else { continue }
            let meter = record.meter ?? ""
            let key = "\(meter)\u{0}\(alert.name)\u{0}\(alert.output ?? "")"
            if var started = open.removeValue(forKey: key) {
                started.to = record.sentAt
                spans.append(started)
            } else if !alert.active {
                spans.append(Span(name: alert.name, meter: meter, message: nil, from: since, to: record.sentAt))
            }
            if alert.active {
                open[key] = Span(name: alert.name, meter: meter, message: alert.message, from: record.sentAt, to: .infinity)
            }
        }
        spans += open.values
        spans.sort { ($0.from, $0.name, $0.meter) < ($1.from, $1.name, $1.meter) }
    }

    /// The spans of `name` that overlap `from...to`.
    func overlapping(_ name: String, _ from: Double, _ to: Double) -> [Span] {
        spans.filter { $0.name == name && $0.from < to && $0.to > from }
    }
}
