import Foundation
import ID3Meter
import ID3MeterCore

/// How a channel of the line-up is doing: what `GET /channels` shows and the metrics count.
public struct ChannelStatus: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Opening its stream, before the first tag.
        case joining
        /// Tags arrive and no alert is active.
        case playing
        /// An alert is active: no creditable tag, or a stale playlist.
        case stalled
        /// Its stream could not be opened; it is tried again.
        case failed
        /// Its stream ended (`EXT-X-ENDLIST`): nothing more will come.
        case ended
    }

    public var name: String
    public var state = State.joining
    /// When the last Nielsen tag was delivered.
    public var lastTag: Date?
    /// The Nielsen tags delivered.
    package var tags = NielsenCounts()
    public var delivered: Int { tags.tags }
    public var invalid: Int { tags.invalid }
    public var placeholder: Int { tags.placeholder }
    public var segmentsRead = 0
    public var segmentsFailed = 0
    /// Segments the packager declared missing (`EXT-X-GAP`), passed without a fetch.
    public var segmentsGap = 0
    public var playlistReloadFailures = 0
    /// Seconds its playback waited on an empty buffer.
    public var stallSeconds = 0.0
    /// How many times its stream was opened again after it failed or ended.
    public var restarts = 0
    package var alerts: Set<TagLossWatch.Alert> = []
    /// The QA report's checks the channel's tags fail (over the last 15 to 30 minutes); a
    /// `failing_checks` alert record says when this changes.
    public var failingChecks: [String] = []
    /// The renditions the last audit found at fault (`audit_renditions`), each with what is
    /// wrong; a `renditions_differ` alert record says when this changes.
    public var renditionsDiffering: [String] = []
    /// `file` (the line-up file) or `api` (added over the API).
    public var source = "file"

    public init(name: String) {
        self.name = name
    }
}
