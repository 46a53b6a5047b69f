/// Which failure an `InputFailure` is, without its details: a value to compare
/// (`failure.code == .cannotOpen`), to count by, or to put in a metric's label (`rawValue`, the
/// kind's name in snake case, stays the same across versions). New kinds of failure come with
/// new codes: a caller that compares codes, or switches over `InputFailure.Kind` with a
/// `default:`, keeps compiling when a version adds one; a switch over every `Kind` case does
/// not.
extension InputFailure {
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        public static let cannotOpen = Code(rawValue: "cannot_open")
        public static let empty = Code(rawValue: "empty")
        public static let unknownForm = Code(rawValue: "unknown_form")
        public static let notTransportStream = Code(rawValue: "not_transport_stream")
        public static let readFailed = Code(rawValue: "read_failed")
        public static let damage = Code(rawValue: "damage")
        public static let noTimedID3 = Code(rawValue: "no_timed_id3")
        public static let untimedEventMessages = Code(rawValue: "untimed_event_messages")
        public static let noSegmentHasTimedID3 = Code(rawValue: "no_segment_has_timed_id3")
        public static let playlist = Code(rawValue: "playlist")
        public static let audioRendition = Code(rawValue: "audio_rendition")
        public static let reloadFailed = Code(rawValue: "reload_failed")
        public static let reloadRecovered = Code(rawValue: "reload_recovered")
        public static let leftLiveWindow = Code(rawValue: "left_live_window")
        public static let mediaSequenceWentBack = Code(rawValue: "media_sequence_went_back")
        public static let renumbered = Code(rawValue: "renumbered")
        public static let discontinuitySequenceWentBack = Code(rawValue: "discontinuity_sequence_went_back")
        public static let sampleEncrypted = Code(rawValue: "sample_encrypted")
        public static let segmentNote = Code(rawValue: "segment_note")
        public static let segmentSkipped = Code(rawValue: "segment_skipped")
        public static let eventsDropped = Code(rawValue: "events_dropped")
        public static let interstitialFailed = Code(rawValue: "interstitial_failed")
        public static let severalPrograms = Code(rawValue: "several_programs")
        public static let lostInARow = Code(rawValue: "lost_in_a_row")
        public static let gaveUp = Code(rawValue: "gave_up")
        public static let notResumable = Code(rawValue: "not_resumable")
        public static let noMatch = Code(rawValue: "no_match")
        public static let nothingReadable = Code(rawValue: "nothing_readable")
        public static let heldBack = Code(rawValue: "held_back")
        public static let switchedPath = Code(rawValue: "switched_path")
        public static let steeringFailed = Code(rawValue: "steering_failed")
        public static let remotePeriod = Code(rawValue: "remote_period")
        public static let noSegmentAvailable = Code(rawValue: "no_segment_available")
        public static let bufferBeyondReach = Code(rawValue: "buffer_beyond_reach")
        public static let serverClock = Code(rawValue: "server_clock")
    }

    /// This failure's code.
    public var code: Code { kind.code }
}

extension InputFailure.Kind {
    /// The kind's code.
    public var code: InputFailure.Code {
        switch self {
        case .cannotOpen: .cannotOpen
        case .empty: .empty
        case .unknownForm: .unknownForm
        case .notTransportStream: .notTransportStream
        case .readFailed: .readFailed
        case .damage: .damage
        case .noTimedID3: .noTimedID3
        case .untimedEventMessages: .untimedEventMessages
        case .noSegmentHasTimedID3: .noSegmentHasTimedID3
        case .playlist: .playlist
        case .audioRendition: .audioRendition
        case .reloadFailed: .reloadFailed
        case .reloadRecovered: .reloadRecovered
        case .leftLiveWindow: .leftLiveWindow
        case .mediaSequenceWentBack: .mediaSequenceWentBack
        case .renumbered: .renumbered
        case .discontinuitySequenceWentBack: .discontinuitySequenceWentBack
        case .sampleEncrypted: .sampleEncrypted
        case .segmentNote: .segmentNote
        case .segmentSkipped: .segmentSkipped
        case .eventsDropped: .eventsDropped
        case .interstitialFailed: .interstitialFailed
        case .severalPrograms: .severalPrograms
        case .lostInARow: .lostInARow
        case .gaveUp: .gaveUp
        case .notResumable: .notResumable
        case .noMatch: .noMatch
        case .nothingReadable: .nothingReadable
        case .heldBack: .heldBack
        case .switchedPath: .switchedPath
        case .steeringFailed: .steeringFailed
        case .remotePeriod: .remotePeriod
        case .noSegmentAvailable: .noSegmentAvailable
        case .bufferBeyondReach: .bufferBeyondReach
        case .serverClock: .serverClock
        }
    }
}
