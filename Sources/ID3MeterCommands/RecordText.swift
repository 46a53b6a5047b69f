import Foundation
import ID3Meter

/// `--format text`: a record as a line for a person at a terminal, the time of day first.
enum RecordText {
    static func line(_ record: MeterRecord) -> [UInt8] {
        let time = clockTime(record.sentAt)
        let text = switch record.content {
        case .event(let event): "\(time)  event \(event.message)"
        case .resume(let resume): "\(time)  resume \(resume.message)"
        case .alert(let alert):
            "\(time)  alert \([record.channel, alert.output, alert.name].compactMap { $0 }.joined(separator: " ")) "
                + "\(alert.active ? "starts" : "ends"): \(alert.message ?? "")"
        case .loss(let loss): "\(time)  loss \(loss.message)"
        case .warning(let warning): "\(time)  warning \(record.channel ?? "") \(warning.message)"
        case .fetchFailure(let failure): "\(time)  \(record.type) \(record.channel ?? "") \(failure.message)"
        case .custom(let custom) where custom.type == "config_change": "\(time)  config \(custom.message ?? "")"
        case .custom(let custom): "\(time)  \(custom.type) \(custom.message ?? "")"
        case .delivery(let delivery):
            "\(time)  sendID3  \(place(delivery))\n              \(delivery.payload)"
        }
        return Array(text.utf8)
    }

    private static func place(_ delivery: MeterRecord.Delivery) -> String {
        [delivery.mediaSequence.map { "seq \($0)" }, delivery.segment.map(Location.name), delivery.pts.map { "pts \($0)" }]
            .compactMap { $0 }.joined(separator: "  ")
    }

    private static func clockTime(_ epoch: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter.string(from: Date(timeIntervalSince1970: epoch))
    }
}
