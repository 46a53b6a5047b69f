/// An input, or one segment of it, that could not be read, or was read only leniently (a
/// warning): named, with the reason in words and, when one was caught, the error it came from
/// (`FetchError`, `SegmentLoadError`, `PlaylistError`, `StreamDamage`...) for callers that
/// act on the kind.
public struct InputFailure: Error, Sendable, CustomStringConvertible {
    /// The input as the user or caller named it.
    public var source: String
    /// The segment's URI, when the failure is one segment's.
    public var segment: String?
    /// What happened, in words for a log or a report.
    public var reason: String
    /// The error value it came from, when there was one.
    public var cause: (any Error & Sendable)?

    public init(source: String, segment: String? = nil, reason: String, cause: (any Error & Sendable)? = nil) {
        self.source = source
        self.segment = segment
        self.reason = reason
        self.cause = cause
    }

    public var description: String {
        segment.map { "\(source): segment \($0): \(reason)" } ?? "\(source): \(reason)"
    }
}
