import Foundation

/// Meter records as lines on a file handle (stdout or a file): JSON lines, or a readable line
/// per record for a person at a terminal. Each record is written as it comes, unbuffered, so
/// a killed meter loses nothing it has delivered.
public final class StreamOutput: MeterOutput {
    /// JSON lines for programs, one plain line per record for people.
    public enum Style: Sendable { case jsonl, text }

    private let handle: FileHandle
    private let style: Style
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Writes to `handle`, which stays open: the caller owns it.
    public init(handle: FileHandle, style: Style) {
        self.handle = handle
        self.style = style
    }

    /// JSON lines appended to the file at `path`, created if need be.
    public convenience init(appendingTo path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        self.init(handle: handle, style: .jsonl)
    }

    public func write(_ record: MeterRecord) {
        handle.write(Data((line(for: record) + "\n").utf8))
    }

    public func finish() async {}

    func line(for record: MeterRecord) -> String {
        switch style {
        case .jsonl:
            return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        case .text:
            let time = Self.clockTime(record.sentAt)
            switch record.type {
            case .event:
                return "\(time)  event \(record.message ?? "")"
            case .resume:
                return "\(time)  resume \(record.message ?? "")"
            case .alert:
                return "\(time)  alert \(record.channel ?? "") \(record.alert ?? "") \(record.active == true ? "starts" : "ends"): \(record.message ?? "")"
            case .sendID3:
                let place = [record.seq.map { "seq \($0)" }, record.segment.map(Location.name), record.pts.map { "pts \($0)" }]
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
