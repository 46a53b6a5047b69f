import Foundation
import ID3Meter

/// A stream with one of each defect the QA report looks for, at known places, and the list
/// of those places: the ground truth the report is tested against.
public struct PlantedDefects: Codable, Sendable, Equatable {
    /// PTS of every Nielsen tag written, in stream order.
    public var tags: [Int64] = []
    /// PTS of the tag at which each defect shows.
    public var placeholder: [Int64] = []
    public var shortGaps: [Int64] = []
    public var longGaps: [Int64] = []
    public var duplicates: [Int64] = []
    public var invalid: [Int64] = []
    public var discontinuities: [Int64] = []
    /// The longest gap between Nielsen tags, in seconds.
    public var longestGap = 0.0

    public init() {}

    /// The TS bytes (independent spec writer) and the defects planted in them.
    public static func stream(startPTS: Int64 = 900_000) -> (bytes: [UInt8], defects: PlantedDefects) {
        var factory = NielsenTagFactory(seed: 77)
        var defects = PlantedDefects()
        var writer = TransportStreamWriter()
        var bytes = writer.programTables()
        func tag(at seconds: Double, owner: String, base: Int64 = startPTS) -> Int64 {
            let pts = base + Int64(seconds * 90_000)
            let id3 = ID3TagSpec(frames: [.priv(owner: owner, data: [0x41])], extraFlags: 0x20).bytes()
            bytes += writer.pes(pts: pts, payload: id3)
            defects.tags.append(pts)
            return pts
        }
        defects.placeholder.append(tag(at: 0, owner: factory.owner(secondsIntoDay: 100, placeholder: true)))
        _ = tag(at: 10, owner: factory.owner(secondsIntoDay: 110))
        _ = tag(at: 20, owner: factory.owner(secondsIntoDay: 120))
        defects.longGaps.append(tag(at: 40, owner: factory.owner(secondsIntoDay: 140)))
        defects.longestGap = 20
        let repeated = factory.owner(secondsIntoDay: 142)
        defects.shortGaps.append(tag(at: 42, owner: repeated))
        defects.duplicates.append(tag(at: 52, owner: repeated))
        let invalid = String(factory.owner(secondsIntoDay: 162).dropLast(2)) + "01"
        defects.invalid.append(tag(at: 62, owner: invalid))
        // The encoder restarts: PTS go back to the start, with no EXT-X-DISCONTINUITY to say so.
        defects.discontinuities.append(tag(at: 5, owner: factory.owner(secondsIntoDay: 172)))
        _ = tag(at: 15, owner: factory.owner(secondsIntoDay: 182))
        return (bytes, defects)
    }
}
