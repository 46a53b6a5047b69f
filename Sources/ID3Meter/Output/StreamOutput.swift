import Foundation

/// Meter records as lines on stdout or in a records file: JSON lines, or on stdout whatever
/// line the caller makes of a record (the command line's text for a person at a terminal).
/// Each record is written as it comes, unbuffered, so a killed meter loses nothing it has
/// delivered; a record the storage refuses is held and written later, in order (`LineWriter`),
/// and said in an alert while it is. Rotating the file (a rename refused, a new file that
/// cannot be made) is said in warning records.
public actor StreamOutput: MeterOutput {
    private let file: RecordFile
    private let line: @Sendable (MeterRecord) -> [UInt8]
    private let now: @Sendable () -> Date
    /// What opening the file found (a torn last line set aside), to be said before anything else.
    public nonisolated let openingNotes: [String]

    /// Writes to standard output a line per record: its JSON, or what `line` makes of it.
    public init(standardOutputLines line: @escaping @Sendable (MeterRecord) -> [UInt8] = { $0.jsonLine }) {
        file = RecordFile(standardOutput: ())
        self.line = line
        now = Date.init
        openingNotes = []
    }

    /// JSON lines appended to the file at `path`, created if need be, rotated as `rotation` says.
    public init(appendingTo path: String, rotation: Rotation? = nil,
                now: @escaping @Sendable () -> Date = Date.init) throws(OpenError) {
        let file = try RecordFile(appendingTo: path, rotation: rotation, now: now)
        openingNotes = file.takeNotes()
        self.file = file
        line = { $0.jsonLine }
        self.now = now
    }

    public func write(_ record: MeterRecord) {
        file.append(line(record), sentAt: record.sentAt, channel: record.channel)
    }

    public func retry() { file.writer.retry() }

    public func finish() async {
        file.writer.retry()
        if file.writer.isHolding { file.writer.abandonHeld() }
    }

    public var health: OutputHealth? { file.writer.health }

    public func takeNotices() -> [MeterRecord] {
        let (changes, loss) = file.writer.take()
        let date = now()
        return LineWriter.Change.records(changes, loss: loss, health: file.writer.health, at: date)
            + file.takeNotes().map { MeterRecord.warning($0, channel: nil, at: date) }
    }

}

extension StreamOutput {
    /// When the `--output` file is rotated: at a size, after an age, keeping the newest rotated files.
    public struct Rotation: Sendable, Equatable {
        public var maximumBytes: UInt64?
        public var maximumAge: Double?
        /// Rotated files kept; every one when `nil`.
        public var keep: Int?

        public init(maximumBytes: UInt64? = nil, maximumAge: Double? = nil, keep: Int? = nil) {
            self.maximumBytes = maximumBytes
            self.maximumAge = maximumAge
            self.keep = keep
        }
    }
}
