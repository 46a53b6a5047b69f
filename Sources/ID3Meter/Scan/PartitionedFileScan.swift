import Foundation

/// One large local MPEG-TS file demuxed by several threads at once, each in its own byte range,
/// so a batch of one big recording uses every core. Each range is demuxed after the file's
/// opening bytes (so its PAT and PMT are known) and reads on past its end far enough to finish
/// the PES packets that start inside it; a tag belongs to the range its PES starts in, so
/// every tag is reported exactly once, in file order.
extension Scanner {
    /// The opening bytes put in front of every range but the first.
    static let partitionPrefixSize: Int64 = 1 << 20
    /// How far a range reads past its end: further than any PES packet of timed ID3 spreads.
    static let partitionOverlap: Int64 = 8 << 20

    /// The byte ranges to demux `input` in, when it is a large enough local MPEG-TS file.
    func partitions(of input: String) -> [Range<Int64>]? {
        guard filePartitions > 1, !Location.hasScheme(input),
              let size = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int64) ?? nil,
              size >= partitionThreshold, TransportStreamSync.formatName(ofFileAt: input) != nil else { return nil }
        let packet = Int64(TransportStreamSync.packetSize)
        let step = size / Int64(filePartitions) / packet * packet
        return (0..<filePartitions).map { index in
            Int64(index) * step..<(index == filePartitions - 1 ? size : Int64(index + 1) * step)
        }
    }

    func scanInParts(_ input: String, parts: [Range<Int64>], emit: (ScanEvent) -> Void) {
        let fileSize = parts.last?.upperBound ?? 0
        let prefix: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
            defer { try? handle.close() }
            prefix = [UInt8](try handle.read(upToCount: Int(Self.partitionPrefixSize)) ?? Data())
        } catch {
            emit(.failure(InputFailure(source: input, reason: "cannot open: \(error.localizedDescription)")))
            return
        }
        let results = PartResults(count: parts.count)
        DispatchQueue.concurrentPerform(iterations: parts.count) { index in
            let range = parts[index]
            let partPrefix = index == 0 ? [] : prefix
            var events: [ScanEvent] = []
            var hasTimedID3 = false
            do {
                let media = try MediaInput(path: input, offset: range.lowerBound,
                                           length: min(range.upperBound + Self.partitionOverlap, fileSize) - range.lowerBound,
                                           prefix: partPrefix, interrupt: fetcher.interrupt)
                readPackets(of: media, origin: TagOrigin(source: input), part: index, prefixBytes: Int64(partPrefix.count),
                            keep: { $0.position.map(range.contains) ?? false }) { events.append($0) }
                hasTimedID3 = media.streams.contains(where: \.isTimedID3)
            } catch {
                events.append(.failure(InputFailure(source: input, reason: "cannot open bytes \(range): \(error)")))
            }
            results.store(index, events: events, hasTimedID3: hasTimedID3)
        }
        let (events, hasTimedID3) = results.collected
        events.forEach(emit)
        if !hasTimedID3 { emit(.failure(InputFailure(source: input, reason: Self.noTimedID3))) }
    }
}

/// Each part's events, filled in by the part's thread.
private final class PartResults: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [[ScanEvent]]
    private var timedID3 = false

    init(count: Int) { events = Array(repeating: [], count: count) }

    func store(_ index: Int, events: [ScanEvent], hasTimedID3: Bool) {
        lock.withLock {
            self.events[index] = events
            timedID3 = timedID3 || hasTimedID3
        }
    }

    var collected: (events: [ScanEvent], hasTimedID3: Bool) { lock.withLock { (events.flatMap { $0 }, timedID3) } }
}
