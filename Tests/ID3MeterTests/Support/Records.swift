@testable import ID3MeterCore

extension TagRecord {
    /// The records of `event`, gathered.
    static func all(for event: MediaEvent, allFrames: Bool) -> [TagRecord] {
        var gathered: [TagRecord] = []
        records(for: event, allFrames: allFrames) { gathered.append($0) }
        return gathered
    }

    /// The record's JSON line.
    var json: String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
