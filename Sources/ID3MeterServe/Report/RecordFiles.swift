import Foundation
import ID3Meter
import ID3MeterReport

/// Record files (a meter's `--output`, `serve`'s JSON lines) read for the report instead of a
/// collector's database: folded as they are read, as the collector folds what it stores. A
/// record without a channel (a meter of one stream) is of a channel named after its file.
package struct RecordFiles: CoverageReading {
    private var spans: [String: ChannelSpan?] = [:]
    private var minutes: [String: [String: [Int: CoverageMinute]]] = [:]
    private var notables: [String: [MeterRecord]] = [:]
    private var copies: Set<String> = []
    /// Lines that were not records: said by the command, never fatal.
    package private(set) var unreadableLines = 0

    /// A line longer than this is not a record (a payload is 249 characters).
    static let longestLine = 1 << 20

    /// `bytes` as the contents of a record file named `name`.
    package init(bytes: Data, name: String) {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            if end - start <= Self.longestLine { add(line: bytes[start..<end], file: name) } else { unreadableLines += 1 }
            start = end + 1
        }
    }

    private init() {}

    package static func read(_ paths: [String]) throws(StoreError) -> RecordFiles {
        var files = RecordFiles()
        for path in paths {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw StoreError("cannot read \(path): \(String(cString: strerror(errno)))") }
            defer { try? handle.close() }
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            var pending = Data()
            var skipping = false
            while true {
                let chunk: Data
                do { chunk = try handle.read(upToCount: 1 << 20) ?? Data() } catch { throw StoreError("cannot read \(path): \(error)") }
                guard !chunk.isEmpty else { break }
                pending.append(chunk)
                var start = pending.startIndex
                while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    if !skipping { files.add(line: pending[start..<end], file: name) }
                    skipping = false
                    start = end + 1
                }
                pending = Data(pending[start...])
                if pending.count > longestLine {
                    files.unreadableLines += 1
                    pending = Data()
                    skipping = true
                }
            }
            if !pending.isEmpty, !skipping { files.add(line: pending[...], file: name) }
        }
        return files
    }

    private static let decoder = JSONDecoder()

    private mutating func add(line: Data, file: String) {
        guard line.contains(where: { !($0 == 32 || $0 == 9 || $0 == 13) }) else { return }
        guard let record = try? Self.decoder.decode(MeterRecord.self, from: line), CoverageMinute.times.contains(record.sentAt) else {
            unreadableLines += 1
            return
        }
        let channel = record.channel ?? file
        let meter = record.meter ?? ""
        if let delivery = record.delivery {
            // The same meter's record read from two files (a rotated copy given twice) is one.
            guard copies.insert("\(channel)\u{0}\(meter)\u{0}\(delivery.tagID)").inserted else { return }
            let minute = CoverageMinute.minute(of: record.sentAt)
            minutes[channel, default: [:]][meter, default: [:]][minute, default: CoverageMinute(minute: minute)]
                .add(TagCredit(payload: delivery.payload), at: record.sentAt)
            spans[channel, default: nil].heard(from: record.sentAt, to: record.sentAt, deletedAt: nil, channel: channel)
            return
        }
        notables[channel, default: []].append(record)
        if case .custom(let custom) = record.content, custom.type == "config_change", custom.fields["action"] == "delete" {
            spans[channel, default: nil].heard(from: nil, to: nil, deletedAt: record.sentAt, channel: channel)
        } else {
            spans[channel, default: nil].heard(from: record.sentAt, to: record.sentAt, deletedAt: nil, channel: channel)
        }
    }

    package func channels() -> [ChannelSpan] { spans.values.compactMap { $0 }.sorted { $0.channel < $1.channel } }

    package func coverage(channel: String, minutes ranges: [Range<Int>]) -> [String: [CoverageMinute]] {
        (minutes[channel] ?? [:]).mapValues { byMinute in
            byMinute.values.filter { minute in ranges.contains { $0.contains(minute.minute) } }.sorted { $0.minute < $1.minute }
        }.filter { !$0.value.isEmpty }
    }

    /// Record files keep no folded hours: every hour is folded from its minutes.
    package func hours(channel: String, hours: Range<Int>) -> [Int: CoverageHour] { [:] }

    package func notable(channel: String, from: Double, to: Double) -> [MeterRecord] {
        (notables[channel] ?? []).filter { $0.sentAt >= from && $0.sentAt < to }.enumerated()
            .sorted { ($0.element.sentAt, $0.offset) < ($1.element.sentAt, $1.offset) }.map(\.element)
    }
}
