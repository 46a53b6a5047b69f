import ID3Meter

/// Where `collect` keeps the records meters post (docs/COLLECTOR.md): each batch once, by its
/// id; each delivery once per `(channel, tag_id)`, whichever meter posted it first; everything
/// committed before the meter is answered, so that a 2xx is a promise the disk keeps.
public protocol RecordStore: Sendable {
    /// Keeps `batch`, or says it was kept before (a meter's resend).
    func store(_ batch: CollectedBatch) async throws(StoreError) -> StoreReceipt
    /// Deletes the records made, and the batch ids received, before `time` (Unix seconds);
    /// the number of records deleted.
    func purge(before time: Double) async throws(StoreError) -> Int
    /// Folds coverage minutes into hours (`CoverageHour`) for hours over long enough, a few
    /// thousand at a time, those batches changed since first; the number folded (0: none left).
    /// One collector folds at a time; the others wait.
    func foldHours(now: Double) async throws(StoreError) -> Int
    /// The records kept of `channel` (all channels: `nil`) made in `from..<to` (Unix seconds),
    /// in the order they were made: a channel's day, for the report.
    func records(channel: String?, from: Double, to: Double) async throws(StoreError) -> [MeterRecord]
    func close() async
}

/// A batch as a meter posted it.
public struct CollectedBatch: Sendable {
    public var id: String
    public var meterVersion: String
    public var records: [CollectedRecord]
    /// When the collector took it (Unix seconds).
    public var receivedAt: Double
    /// The name of the token it came with (`local` without tokens): who posted it.
    public var postedBy: String

    public init(id: String, meterVersion: String, records: [CollectedRecord], receivedAt: Double, postedBy: String) {
        self.id = id
        self.meterVersion = meterVersion
        self.records = records
        self.receivedAt = receivedAt
        self.postedBy = postedBy
    }
}

/// A record as posted: read for its keys, kept as the meter wrote it (every field, those of a
/// later version's kinds too).
public struct CollectedRecord: Sendable {
    public var record: MeterRecord
    /// Its JSON, every field the meter sent.
    public var json: String

    public init(record: MeterRecord, json: String) {
        self.record = record
        self.json = json
    }
}

/// What the store did with a batch.
public struct StoreReceipt: Sendable, Equatable {
    /// The batch id was kept before: nothing of it was stored again.
    public var alreadyHad: Bool
    public var records: Int
    /// Records stored: the batch's, less deliveries of a `(channel, tag_id)` already kept.
    public var kept: Int
}

/// The store could not do it: the meter is answered 503 and sends the batch again.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
