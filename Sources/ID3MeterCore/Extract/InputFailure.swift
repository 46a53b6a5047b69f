/// An input, or one segment of it, that could not be read, or was read only leniently (a
/// warning): named, with the reason in words and, when one was caught, the error it came from
/// (`FetchError`, `SegmentLoadError`, `PlaylistError`, `StreamDamage`...) for callers that
/// act on the kind.
public struct InputFailure: Error, Sendable, CustomStringConvertible {
    public var source: String
    public var segment: String?
    public var reason: String
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
