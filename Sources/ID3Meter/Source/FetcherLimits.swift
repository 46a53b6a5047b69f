extension Fetcher {
    /// How much a fetch may take, in bytes and in time. A segment, playlist, key or initialisation
    /// section comes from someone else's server: none may grow without bound or take for ever.
    /// What the user names as an input (a file, a TS stream) is theirs and is only read as it comes.
    public struct Limits: Sendable, Equatable {
        /// What is being fetched: each kind has its own size limit.
        public enum Resource: Sendable {
            case input, playlist, segment, key, initSection

            var name: String {
                switch self {
                case .input: "input"
                case .playlist: "playlist"
                case .segment: "segment"
                case .key: "key"
                case .initSection: "initialisation section"
                }
            }

            var article: String { self == .input || self == .initSection ? "an" : "a" }
        }

        public var maximumPlaylistBytes = 16 << 20
        public var maximumSegmentBytes = 256 << 20
        public var maximumKeyBytes = 64 << 10
        public var maximumInitBytes = 16 << 20
        /// A fixed overall time for each fetch; `nil`: three target durations, at least `minimumDeadline`.
        public var fetchDeadline: Duration?
        /// Lost segments in a row after which a VOD playlist is given up (a live one is followed on, with a warning).
        public var maximumConsecutiveLostSegments = 10

        /// What a fetch that knows no target duration (a first playlist load, a key) is given.
        public static let minimumDeadline = 10.0

        public init() {}

        /// The most bytes a fetch of `resource` may bring; an input the user named has no limit.
        public func maximumBytes(for resource: Resource) -> Int {
            switch resource {
            case .input: .max
            case .playlist: maximumPlaylistBytes
            case .segment: maximumSegmentBytes
            case .key: maximumKeyBytes
            case .initSection: maximumInitBytes
            }
        }

        /// The overall time a fetch of `resource` may take, for a playlist of `targetDuration`:
        /// three target durations, as a player that must not fall behind the live edge allows.
        public func deadline(for resource: Resource, targetDuration: Double?) -> Double? {
            guard resource != .input else { return nil }
            return fetchDeadline?.seconds ?? max(3 * (targetDuration ?? 0), Self.minimumDeadline)
        }
    }
}
