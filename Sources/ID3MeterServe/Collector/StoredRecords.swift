import Foundation
import ID3Meter

/// Records read back from the collector's database, decoded as a batch is (`BatchBody`: one
/// scan, each plain record decoded from its fields): a fleet's month is millions of alerts, and
/// JSONDecoder's tree of each object was a tenth of its report. A record the scan refuses (a
/// database changed by hand) is decoded alone by JSONDecoder, which names what is wrong with it.
enum StoredRecords {
    static func decode(_ texts: [String], of channel: String) throws(StoreError) -> [MeterRecord] {
        guard !texts.isEmpty else { return [] }
        var body = Array(#"{"batch":"stored","records":["#.utf8)
        for (index, text) in texts.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += text.utf8
        }
        body += "]}".utf8
        if let batch = try? body.withUnsafeBytes({ bytes throws(StoreError) in try BatchBody.batch(in: bytes, by: "", at: 0) }),
           batch.records.count == texts.count {
            return batch.records.map(\.record)
        }
        let decoder = JSONDecoder()
        return try texts.map { text throws(StoreError) in
            do { return try decoder.decode(MeterRecord.self, from: Data(text.utf8)) } catch {
                throw StoreError("cannot read a record of \(channel): \(error)")
            }
        }
    }
}
