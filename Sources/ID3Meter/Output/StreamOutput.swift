import Foundation

/// Meter records as lines on stdout or in a records file: JSON lines, or a readable line
/// per record for a person at a terminal. Each record is written as it comes, unbuffered, so a
/// killed meter loses nothing it has delivered; a record the storage refuses is held and
/// written later, in order (`LineWriter`), and said in an alert while it is. Rotating the file
/// (a rename refused, a new file that cannot be made) is said in warning records.
public actor StreamOutput: MeterOutput {
    /// JSON lines for programs, one plain line per record for people.
    public enum Style: Sendable { case jsonl, text }

    private let file: RecordFile
    private let style: Style
    private let now: @Sendable () -> Date
    /// What opening the file found (a torn last line set aside), to be said before anything else.
    public nonisolated let openingNotes: [String]

    /// Writes to standard output.
    public init(standardOutputStyle style: Style) {
        file = RecordFile(standardOutput: ())
        self.style = style
        now = Date.init
        openingNotes = []
    }

    /// JSON lines appended to the file at `path`, created if need be, rotated as `rotation` says.
    public init(appendingTo path: String, rotation: OutputRotation? = nil,
                now: @escaping @Sendable () -> Date = Date.init) throws(RecordFileError) {
        let file = try RecordFile(appendingTo: path, rotation: rotation, now: now)
        openingNotes = file.takeNotes()
        self.file = file
        style = .jsonl
        self.now = now
    }

    public func write(_ record: MeterRecord) {
        file.append(Array(line(for: record).utf8), sentAt: record.sentAt, channel: record.channel)
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

    func line(for record: MeterRecord) -> String {
        switch style {
        case .jsonl:
            return String(decoding: record.jsonLine, as: UTF8.self)
        case .text:
            let time = Self.clockTime(record.sentAt)
            switch record.type {
            case .event:
                return "\(time)  event \(record.message ?? "")"
            case .resume:
                return "\(time)  resume \(record.message ?? "")"
            case .alert:
                let subject = [record.channel, record.output, record.alert].compactMap { $0 }.joined(separator: " ")
                return "\(time)  alert \(subject) \(record.active == true ? "starts" : "ends"): \(record.message ?? "")"
            case .loss:
                return "\(time)  loss \(record.message ?? "")"
            case .warning:
                return "\(time)  warning \(record.channel ?? "") \(record.message ?? "")"
            case .configChange:
                return "\(time)  config \(record.message ?? "")"
            case .sendID3:
                let place = [record.mediaSequence.map { "seq \($0)" }, record.segment.map(Location.name), record.pts.map { "pts \($0)" }]
                    .compactMap { $0 }.joined(separator: "  ")
                return "\(time)  sendID3  \(place)\n              \(record.payload ?? "")"
            }
        }
    }

    private static func clockTime(_ epoch: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: Date(timeIntervalSince1970: epoch))
    }
}

/// When the `--output` file is rotated: at a size, after an age, keeping the newest rotated files.
public struct OutputRotation: Sendable, Equatable {
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
