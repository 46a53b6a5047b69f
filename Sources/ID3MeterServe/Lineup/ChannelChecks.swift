import ID3Meter

/// A channel's tags judged as `scan`'s QA report judges a recording: the same builder, checks
/// and tolerances, over windows of 15 minutes of the channel's time (about the length of stream
/// the Validator's guide gives its tolerances for). A window's counts are dropped when the next
/// one starts, so a channel metered for weeks holds one window's worth. A check fails the
/// channel while it fails in the window in progress or in the last whole one.
struct ChannelChecks {
    static let window = 900.0

    private let channel: String
    private var builder: SourceReportBuilder
    private var windowStart: Double
    private var lastWindowFailing: Set<String> = []
    /// The checks the channel fails now, sorted.
    private(set) var failing: [String] = []

    init(channel: String, at now: Double) {
        self.channel = channel
        builder = SourceReportBuilder(source: channel, listingFindings: false)
        windowStart = now
    }

    /// Takes the channel's next event at `now` (seconds on the caller's clock); true when the
    /// failing checks changed.
    mutating func add(_ event: MediaEvent, at now: Double) -> Bool {
        if now - windowStart >= Self.window {
            lastWindowFailing = Self.failing(builder.report)
            builder = SourceReportBuilder(source: channel, listingFindings: false)
            windowStart = now
        }
        builder.add(event)
        // Judged when a segment's events are in, not at each of its tags: a report is every
        // check over the window, and building it at each tag was about 3% of `serve`'s CPU
        // (issue 56's profile). A tag of no segment (a stream read as one file) is judged as it comes.
        switch event {
        case .segment, .malformed: break
        case .tag(let timed) where timed.origin.segment == nil: break
        case .tag, .opened, .failure, .warning, .resumed, .mediaTime: return false
        }
        let current = Self.failing(builder.report).union(lastWindowFailing).sorted()
        defer { failing = current }
        return current != failing
    }

    /// A segment or reload that failed has its own counts, series and alerts in `serve`; as a
    /// check it would only repeat them.
    private static func failing(_ report: SourceReport) -> Set<String> {
        Set(report.failedChecks).subtracting(["read_errors"])
    }
}
