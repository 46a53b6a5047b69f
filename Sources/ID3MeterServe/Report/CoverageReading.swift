import ID3Meter
import ID3MeterReport

/// Where `id3-meter report` reads a line-up's records: the collector's database
/// (`SQLiteRecordStore`, `PostgresRecordStore`) or record files (`RecordFiles`).
package protocol CoverageReading: Sendable {
    /// Every channel heard of.
    func channels() async throws(StoreError) -> [ChannelSpan]
    /// Each meter's coverage minutes of `channel` in any of `minutes` (ranges apart, in order), by minute.
    func coverage(channel: String, minutes: [Range<Int>]) async throws(StoreError) -> [String: [CoverageMinute]]
    /// The channel's hours in `hours` the collector folded and that no delivery stored since
    /// has changed (`CoverageHour`), by hour.
    func hours(channel: String, hours: Range<Int>) async throws(StoreError) -> [Int: CoverageHour]
    /// The channel's records other than deliveries made in `from..<to`, in the order they were made.
    func notable(channel: String, from: Double, to: Double) async throws(StoreError) -> [MeterRecord]
}
