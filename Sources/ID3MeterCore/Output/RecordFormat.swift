import FoundationEssentials

/// How records are written: JSON lines for machines, CSV for spreadsheets, text for people.
package enum RecordFormat: String, CaseIterable, Sendable {
    case jsonl, csv, text

    /// `namingSources`: text rows say which input they come from (a run of several inputs).
    package func makeWriter(namingSources: Bool = false) -> any RecordWriter {
        switch self {
        case .jsonl: JSONLRecordWriter()
        case .csv: CSVRecordWriter()
        case .text: TextRecordWriter(namingSources: namingSources)
        }
    }
}

/// Turns records into lines of output.
package protocol RecordWriter {
    /// Lines to write before the first record.
    func header() -> String?
    /// Appends the record's line, without its line break, to `output`: a scan writes one per tag
    /// into the input's buffer.
    func append(_ record: TagRecord, to output: inout [UInt8])
}

struct JSONLRecordWriter: RecordWriter {
    func header() -> String? { nil }

    func append(_ record: TagRecord, to output: inout [UInt8]) { record.appendJSON(to: &output) }
}

struct CSVRecordWriter: RecordWriter {
    static let columns = ["type", "source", "segment", "media_sequence", "pts", "time", "program_date_time",
                          "payload", "pc_cid", "fd_cid", "pc_offset", "fd_offset", "breakout", "valid",
                          "placeholder_pc_cid", "issues", "frame", "owner", "size", "id3_version", "reason", "tag_id"]

    func header() -> String? { Self.columns.joined(separator: ",") }

    func append(_ record: TagRecord, to output: inout [UInt8]) { output += row(for: record).utf8 }

    private func row(for record: TagRecord) -> String {
        let fields: [String?] = [
            record.type.rawValue, record.source, record.segment, record.mediaSequence.map(String.init),
            record.pts.map(String.init), record.time.map { FixedPoint.string($0, places: 6) }, record.programDateTime,
            record.payload, record.pcCID, record.fdCID, record.pcOffset, record.fdOffset, record.breakout,
            record.valid.map(String.init), record.placeholderPCCID.map(String.init), record.issues?.joined(separator: "; "),
            record.frame, record.owner, record.size.map(String.init), record.id3Version, record.reason, record.tagID,
        ]
        return fields.map { Self.escape($0 ?? "") }.joined(separator: ",")
    }

    /// RFC 4180: quote a field holding a comma, quote or line break; double its quotes.
    private static func escape(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return field }
        return "\"" + field.replacing("\"", with: "\"\"") + "\""
    }
}

struct TextRecordWriter: RecordWriter {
    var namingSources = false

    func header() -> String? { nil }

    func append(_ record: TagRecord, to output: inout [UInt8]) { output += text(for: record).utf8 }

    private func text(for record: TagRecord) -> String {
        let time = record.time.map { FixedPoint.string($0, places: 3, width: 10) + "s" } ?? "    no PTS"
        // seg0.ts under four playlists is four places: with several inputs, the input goes first.
        let segment = record.segment.map(Location.name)
        let place = namingSources ? [record.source, segment].compactMap { $0 }.joined(separator: " ") : segment ?? Location.name(record.source)
        switch record.type {
        case .nielsen:
            var status = record.valid == true ? "valid" : "INVALID (\(record.issues?.joined(separator: "; ") ?? ""))"
            if record.placeholderPCCID == true { status += ", placeholder PC CID" }
            return "\(time)  \(place)  nielsen  \(status)\n            \(record.payload ?? "")"
        case .frame:
            return "\(time)  \(place)  \(record.frame ?? "")  \(record.size ?? 0) bytes  \(record.owner ?? "")"
        case .malformed:
            return "\(time)  \(place)  MALFORMED  \(record.reason ?? "")"
        }
    }
}
