import Foundation
import ID3MeterCore

/// A big local MPEG-TS file scanned in blocks on several threads, its events exactly those of
/// one pass from start to end.
///
/// The first block is read in order by the caller's extractor. Each later block is read on a
/// thread of its own by an extractor started some way before the block (`overlaps`), so that by
/// the block's first byte it has learnt the program tables and holds any PES in progress; what it
/// finds before that byte is dropped. In order, a block's events are taken only when its
/// extractor's state at the block's first byte equals the state the block before ended in: two
/// extractors in one state make the same events of the same bytes. Otherwise (a program table
/// that changed, a PES longer than the overlap, lost sync) the block is read again, in order,
/// from the true state. At most `workers` blocks wait with their events at once.
struct BlockwiseFileScan {
    static let blockSize = 16 << 20
    /// Smaller files are read in one pass, in a few tens of milliseconds.
    static let minimumSize = 64 << 20

    let input: String
    let workers: Int
    let progress: ScanProgress?
    /// Events a block may hold while it waits for its turn (a dense block has about 1,500);
    /// a block with more, a stream of nothing but tags, is read again in order instead, so that
    /// what waits stays bounded whatever the stream holds.
    var maximumEvents = 65_536
    /// How far before its block an extractor starts, the shorter first: a dense stream teaches it
    /// all it needs (`hasSettled`) in 256 KB; else 4 MB, enough for a tag every 2 s at 16 Mbit/s
    /// to be seen before the block. Whole numbers of packets.
    var overlaps = [256 << 10, 4 << 20].map { $0 / TransportStreamSync.packetSize * TransportStreamSync.packetSize }

    private struct Block: Sendable {
        /// The block's extractor as it stood at the block's first byte; `nil` when the block could
        /// not be read or held more than `maximumEvents` (it is then read again in order).
        var start: TransportStreamExtractor?
        var events: [MediaEvent] = []
        var end: TransportStreamExtractor?
    }

    /// How the blocks of a scan went: taken as their threads read them, or read again in order.
    struct Outcome: Equatable {
        var taken = 0
        var readAgain = 0
    }

    /// The block boundaries of a file of `size` bytes whose packets start at `firstPacket`, the
    /// first `read` bytes of which were read already: on that packet grid, about `blockSize`
    /// apart, the first after `read`; the last is `size`.
    static func boundaries(size: Int, firstPacket: Int, read: Int, blockSize: Int = blockSize) -> [Int] {
        let packet = TransportStreamSync.packetSize
        let starts = stride(from: blockSize, to: size - blockSize / 2, by: blockSize)
            .map { firstPacket + ($0 - firstPacket) / packet * packet }.filter { $0 > read }
        return [0] + starts + [size]
    }

    /// Scans the file, whose first bytes `extractor` has been given up to `read` (they showed
    /// MPEG-TS), ending with `extractor.finish`.
    ///
    /// Each block's events are emitted by the thread that read the block, when its turn comes:
    /// passed on in the same thread, a tag's objects are still in that core's cache (handed to
    /// another core, every tag's objects crossed between caches: a sixth of the CPU). `emit` is
    /// called from one thread at a time, in stream order, and never after this returns.
    @discardableResult
    func run(boundaries: [Int], extractor: inout MediaExtractor, alreadyRead read: Int, emit: (MediaEvent) -> Void) async -> Outcome {
        let turns = Turns(InOrder(bytes: read))
        await withoutActuallyEscaping(emit) { emit in
            let sink = Sink(emit)
            var started: [Int: Task<Void, Never>] = [:]
            func start(_ index: Int) {
                guard index < boundaries.count - 1 else { return }
                let scan = self
                started[index] = Task {
                    await BlockingExecutor(label: "block").run {
                        let block = scan.read(block: index, boundaries)
                        var inOrder = turns.wait(for: index)
                        defer { turns.pass(inOrder, to: index + 1) }
                        inOrder.take(block, index, boundaries, scan, emit: sink.emit)
                    }
                }
            }
            (1...max(workers, 1)).forEach(start)
            // The first block, in order, while the others are read.
            var first = turns.wait(for: 0)
            first.failure = first.read(self, read, boundaries[1]) { extractor.feed($0, emit: emit) }
            if first.failure == nil { first.state = extractor.transportStream }
            turns.pass(first, to: 1)
            for index in 1..<boundaries.count - 1 {
                await started.removeValue(forKey: index)!.value
                start(index + workers)
            }
            sink.close()
        }
        var last = turns.wait(for: boundaries.count - 1)
        if let state = last.state { extractor.transportStream = state }
        last.state = nil
        return finish(last, extractor: &extractor, emit: emit)
    }

    private func finish(_ inOrder: InOrder, extractor: inout MediaExtractor, emit: (MediaEvent) -> Void) -> Outcome {
        extractor.finish(emit: emit)
        // As a scan read in one pass says it: what was read is reported, then the error.
        if let failure = inOrder.failure {
            let cause = FetchFailure(error: failure, attempts: 1)
            emit(.failure(InputFailure(source: input, reason: "read error after \(inOrder.bytes) bytes: \(cause)", cause: cause)))
        }
        return inOrder.outcome
    }

    /// What the scan in stream order has come to: handed from block to block as each takes its turn.
    private struct InOrder: Sendable {
        /// The extractor as it stands after the blocks before.
        var state: TransportStreamExtractor?
        var bytes: Int
        var failure: FetchError?
        var outcome = Outcome()

        init(bytes: Int) { self.bytes = bytes }

        /// The block's events when its extractor started in this state; else the block read
        /// again, in order, from this state. Nothing once a read has failed.
        mutating func take(_ block: Block, _ index: Int, _ boundaries: [Int], _ scan: BlockwiseFileScan,
                           emit: (MediaEvent) -> Void) {
            guard failure == nil, var current = state else { return }
            defer { state = current }
            if current.isBetweenPackets, let start = block.start, let end = block.end, start == current {
                block.events.forEach(emit)
                outcome.taken += 1
                current = end
                bytes += boundaries[index + 1] - boundaries[index]
                scan.progress?.update(scan.input, bytes: Int64(bytes))
            } else {
                outcome.readAgain += 1
                failure = read(scan, boundaries[index], boundaries[index + 1]) { current.feed($0, emit: emit) }
            }
        }

        /// Feeds bytes `from..<to` of the file to `feed`; the error, if the read fails.
        mutating func read(_ scan: BlockwiseFileScan, _ from: Int, _ to: Int, _ feed: (UnsafeBufferPointer<UInt8>) -> Void) -> FetchError? {
            do throws(FetchError) {
                try LocalFile.read(scan.input, range: ByteRange(offset: from, length: to - from), limit: .max, resource: .input) { chunk in
                    bytes += chunk.count
                    scan.progress?.update(scan.input, bytes: Int64(bytes))
                    feed(chunk)
                }
                return nil
            } catch {
                return error
            }
        }
    }

    /// Block order among the threads: the one whose turn it is has the scan's state.
    private final class Turns: @unchecked Sendable {
        private let condition = NSCondition()
        private var next: Int
        private var inOrder: InOrder

        /// The first turn is block 0's.
        init(_ inOrder: InOrder) {
            next = 0
            self.inOrder = inOrder
        }

        func wait(for index: Int) -> InOrder {
            condition.lock()
            defer { condition.unlock() }
            while next != index { condition.wait() }
            return inOrder
        }

        func pass(_ inOrder: InOrder, to index: Int) {
            condition.lock()
            defer { condition.unlock() }
            self.inOrder = inOrder
            next = index
            condition.broadcast()
        }
    }

    /// The caller's `emit`, called from the block threads in turn. Let go of before `run` returns.
    private final class Sink: @unchecked Sendable {
        private var body: ((MediaEvent) -> Void)?

        init(_ body: @escaping (MediaEvent) -> Void) { self.body = body }

        func emit(_ event: MediaEvent) { body?(event) }

        func close() { body = nil }
    }

    /// Block `index`, read by an extractor of its own started `overlaps` before it.
    private func read(block index: Int, _ boundaries: [Int]) -> Block {
        let first = boundaries[index]
        var block = Block()
        do {
            var extractor: TransportStreamExtractor!
            for overlap in overlaps {
                let lead = max(first - overlap, 0)
                extractor = TransportStreamExtractor(origin: TagOrigin(source: input), startingAt: Int64(lead))
                try LocalFile.read(input, range: ByteRange(offset: lead, length: first - lead), limit: .max, resource: .input) { chunk in
                    extractor.skim(chunk)
                }
                if extractor.hasSettled || lead == 0 { break }
            }
            block.start = extractor
            var overflowed = false
            try LocalFile.read(input, range: ByteRange(offset: first, length: boundaries[index + 1] - first), limit: .max, resource: .input) { chunk in
                guard !overflowed else { return }
                extractor.feed(chunk) { block.events.append($0) }
                overflowed = block.events.count > maximumEvents
            }
            if overflowed { return Block() }
            block.end = extractor
        } catch {
            block.start = nil
        }
        return block
    }
}
