import Foundation
import ID3Meter

/// `--format text`: a record as a line for a person at a terminal, the time of day first.
enum RecordText {
    static func line(_ record: MeterRecord) -> [UInt8] {
        let time = clockTime(record.sentAt)
        let text = switch record.type {
        case .event: "\(time)  event \(record.message ?? "")"
        case .resume: "\(time)  resume \(record.message ?? "")"
        case .alert:
            "\(time)  alert \([record.channel, record.output, record.alert].compactMap { $0 }.joined(separator: " ")) "
                + "\(record.active == true ? "starts" : "ends"): \(record.message ?? "")"
        case .loss: "\(time)  loss \(record.message ?? "")"
        case .warning: "\(time)  warning \(record.channel ?? "") \(record.message ?? "")"
        case .configChange: "\(time)  config \(record.message ?? "")"
        case .sendID3:
            "\(time)  sendID3  \(place(record))\n              \(record.payload ?? "")"
        }
        return Array(text.utf8)
    }

    private static func place(_ record: MeterRecord) -> String {
        [record.mediaSequence.map { "seq \($0)" }, record.segment.map(Location.name), record.pts.map { "pts \($0)" }]
            .compactMap { $0 }.joined(separator: "  ")
    }

    private static func clockTime(_ epoch: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: Date(timeIntervalSince1970: epoch))
    }
}
