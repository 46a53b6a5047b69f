/// What the records say about a stretch without a creditable tag, in the order the report lists
/// them: the likeliest first. Each is a fact the records hold, not a guess past them.
package enum GapCause: String, Codable, Sendable, CaseIterable, Comparable {
    /// A meter's output dropped records made during it (a `loss` record): the tags may
    /// have been delivered, but the collector never got them.
    case recordsLost = "records_lost"
    /// No meter sent a record of any kind during it, and none had an alert open: stopped,
    /// cut off from the collector, or its alert threshold is longer than the gap.
    case silent
    /// The stream could not be opened, or its segments came and did not parse
    /// (`stream_unreadable`, `segment_failed` records of reason `unreadable`).
    case streamUnreadable = "stream_unreadable"
    /// The playlist (or MPD) could not be loaded: its reloads failed (`playlist_unreachable`,
    /// `playlist_failed` records).
    case playlistUnreachable = "playlist_unreachable"
    /// The playlist advanced and its segments failed (`segments_failing`, `segment_failed`
    /// records). Before `playlistStale`: a segment's retries can outlast three target durations,
    /// and the segments it lists are how the meter knows the playlist advanced.
    case segmentsFailing = "segments_failing"
    /// The live playlist answered and stopped advancing (`playlist_stale`).
    case playlistStale = "playlist_stale"
    /// Tags came, but only placeholder-CID, INFO or invalid ones (`only_uncreditable_tags`).
    case onlyUncreditableTags = "only_uncreditable_tags"
    /// Segments came without Nielsen tags (`no_tags` with the stream readable and advancing).
    case noTags = "no_tags"
    /// The stream was read from a backup copy (`on_backup`).
    case failover
    /// A meter started, stopped or resumed from its checkpoint during it.
    case meterRestart = "meter_restart"
    /// A warning a meter wrote during it (its sequence went back, a path switched...).
    case warning
    /// The meters were running and said nothing about it.
    case unexplained

    package static func < (lhs: GapCause, rhs: GapCause) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
