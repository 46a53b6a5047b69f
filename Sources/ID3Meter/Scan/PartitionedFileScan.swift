import Foundation

/// One large local MPEG-TS file demuxed by several threads at once, in byte ranges, so a batch
/// of one big recording uses every core. Each range is demuxed after the file's opening bytes
/// (so its PAT and PMT are known) and reads on past its end far enough to finish the PES
/// packets that start inside it; a tag belongs to the range its PES starts in, so every tag is
/// reported exactly once, in file order. Ranges are handed out in order and at most one more
/// than there are threads waits to be emitted, so memory stays flat whatever the file's size.
extension Scanner {
    /// The opening bytes put in front of every range but the first: the PAT and PMT open a
    /// file and repeat every 100 ms at most (ISO/IEC 13818-1 §2.4.4), well within this.
    static let partitionPrefixSize: Int64 = 256 << 10
    /// How far a range reads past its end: further than any timed-ID3 PES packet spreads.
    static let partitionOverlap: Int64 = 1 << 20
    static let maximumPartitionSize: Int64 = 32 << 20

    /// The byte ranges to demux `input` in, when it is a large enough local MPEG-TS file.
    func partitions(of input: String) -> [Range<Int64>]? {
        guard filePartitions > 1, !Location.hasScheme(input),
              let size = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int64) ?? nil,
              size >= partitionThreshold, TransportStreamSync.formatName(ofFileAt: input) != nil else { return nil }
        let packet = Int64(TransportStreamSync.packetSize)
        let step = max(packet, min(Self.maximumPartitionSize, size / Int64(filePartitions)) / packet * packet)
        return stride(from: Int64(0), to: size, by: Int(step)).map { $0..<min($0 + step, size) }
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
        let board = PartBoard(count: parts.count, window: filePartitions + 1)
        let workers = DispatchGroup()
        for _ in 0..<min(filePartitions, parts.count) {
            DispatchQueue.global().async(group: workers) { [self] in
                while let index = board.claim() {
                    board.store(index, readPart(input, range: parts[index], index: index, fileSize: fileSize,
                                                prefix: index == 0 ? [] : prefix))
                }
            }
        }
        var hasTimedID3 = false
        for index in parts.indices {
            let part = board.take(index)
            part.events.forEach(emit)
            hasTimedID3 = hasTimedID3 || part.hasTimedID3
        }
        workers.wait()
        if !hasTimedID3 { emit(.failure(InputFailure(source: input, reason: Self.noTimedID3))) }
    }

    private func readPart(_ input: String, range: Range<Int64>, index: Int, fileSize: Int64, prefix: [UInt8]) -> PartBoard.Part {
        var events: [ScanEvent] = []
        do {
            let media = try MediaInput(path: input, offset: range.lowerBound,
                                       length: min(range.upperBound + Self.partitionOverlap, fileSize) - range.lowerBound,
                                       prefix: prefix, interrupt: fetcher.interrupt)
            readPackets(of: media, origin: TagOrigin(source: input), part: index, prefixBytes: Int64(prefix.count),
                        keep: { $0.position.map(range.contains) ?? false }) { events.append($0) }
            return PartBoard.Part(events: events, hasTimedID3: media.streams.contains(where: \.isTimedID3))
        } catch {
            return PartBoard.Part(events: [.failure(InputFailure(source: input, reason: "cannot open bytes \(range): \(error)"))],
                                  hasTimedID3: false)
        }
    }
}

/// Hands out part indices in order, no more than `window` ahead of the one being emitted, and
/// passes each part's events from its thread to the emitting one.
private final class PartBoard: @unchecked Sendable {
    struct Part {
        var events: [ScanEvent]
        var hasTimedID3: Bool
    }

    private let condition = NSCondition()
    private let count: Int
    private let window: Int
    private var nextClaim = 0
    private var nextTake = 0
    private var parts: [Int: Part] = [:]

    init(count: Int, window: Int) {
        self.count = count
        self.window = window
    }

    func claim() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while nextClaim < count, nextClaim >= nextTake + window { condition.wait() }
        guard nextClaim < count else { return nil }
        defer { nextClaim += 1 }
        return nextClaim
    }

    func store(_ index: Int, _ part: Part) {
        condition.lock()
        parts[index] = part
        condition.broadcast()
        condition.unlock()
    }

    func take(_ index: Int) -> Part {
        condition.lock()
        defer { condition.unlock() }
        while parts[index] == nil { condition.wait() }
        nextTake = index + 1
        condition.broadcast()
        return parts.removeValue(forKey: index)!
    }
}
