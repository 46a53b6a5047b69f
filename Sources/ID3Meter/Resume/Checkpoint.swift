import Foundation

/// What `checkpoint.json` in a state directory holds: each channel's last delivery as of the
/// moment it was written, and how far into the records file that moment was. It is a summary
/// of the records, never ahead of them: the records written after it are read back on start.
struct Checkpoint: Codable, Equatable {
    static let format = "id3-meter-state"
    static let version = 1

    var format = Checkpoint.format
    var version = Checkpoint.version
    var meterVersion = ID3MeterVersion.current
    /// The `--output` file the records went to, and its size when this was written.
    var recordsFile: String?
    var recordsOffset: UInt64 = 0
    /// Which file that was (its inode): once it has been rotated, the offset is into the rotated file.
    var recordsInode: UInt64?
    var points = ResumePoints()

    enum CodingKeys: String, CodingKey {
        case format, version, meterVersion = "meter_version", recordsFile = "records_file", recordsOffset = "records_offset", recordsInode = "records_inode"
        case points = "channels"
    }
}

extension ResumePoints {
    /// Folds every delivery record in JSON lines `text`; the number of lines that were not records.
    mutating func fold(jsonLines text: Substring) -> Int {
        let decoder = JSONDecoder()
        var unreadable = 0
        for line in text.split(separator: "\n") where !line.allSatisfy(\.isWhitespace) {
            guard let record = try? decoder.decode(MeterRecord.self, from: Data(line.utf8)) else {
                unreadable += 1
                continue
            }
            fold(record)
        }
        return unreadable
    }
}

