import Foundation
import ID3MeterCore

/// A big local MPEG-TS file scanned in blocks on several threads, its events exactly those of
/// one pass from start to end.
///
/// The first block is read in order by the caller's extractor. Each later block is read by one
/// of `workers` threads, with an extractor started some way before the block (`overlaps`), so
/// that by the block's first byte it has learnt the program tables and holds any PES in
/// progress; what it finds before that byte is dropped. In order, a block's events are taken
/// only when its extractor's state at the block's first byte equals the state the block before
/// ended in: two extractors in one state make the same events of the same bytes. Otherwise (a
/// program table that changed, a PES longer than the overlap, lost sync) the block is read
/// again, in order, from the true state. At most `workers` blocks past the one being passed on
/// are read ahead.
struct BlockwiseFileScan {
    static let blockSize = 16 << 20
    /// Smaller files are read in one pass, in a few tens of milliseconds.
    static let minimumSize = 64 << 20

    let input: String
    let workers: Int
    let progress: ScanProgress?
    /// Cancelled when the scan is to stop: every block read then ends at its next chunk.
    var interrupt: Interrupt?
    /// Which programs are read: each block's extractor as the one before it.
    var programs = ProgramSelection.all
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
    /// `workers` threads each read the next block, then pass its events on if its turn has
    /// come; a block whose turn has not come is left for the thread that passes on the block
    /// before it, and its reader goes on to the next block: no thread waits while there are
    /// blocks to read. Passed on by the thread that read them, a tag's objects are still in that
    /// core's cache (handed to another thread, every tag's objects crossed between caches).
    /// `emit` is called from one thread at a time, in stream order, and never after this returns.
    @discardableResult
    func run(boundaries: [Int], extractor: inout MediaExtractor, alreadyRead read: Int, emit: (MediaEvent) -> Void) async -> Outcome {
        let schedule = Schedule(blocks: boundaries.count - 1, ahead: max(workers, 1), InOrder(bytes: read))
        await withoutActuallyEscaping(emit) { emit in
            let sink = Sink(emit)
            let scan = self
            let threads = (0..<max(workers, 1)).map { _ in
                Task { await BlockingPool.run { scan.work(schedule, boundaries, emit: sink.emit) } }
            }
            // The first block, in order, while the threads read the next ones: its turn is this task's.
            var first = InOrder(bytes: read)
            first.failure = first.read(self, read, boundaries[1]) { extractor.feed($0, emit: emit) }
            if first.failure == nil { first.state = extractor.transportStream }
            if let next = schedule.pass(first, after: 0) { take(next, 1, first, schedule, boundaries, emit: emit) }
            for thread in threads { await thread.value }
            sink.close()
        }
        let last = schedule.end()
        if let state = last.state { extractor.transportStream = state }
        return finish(last, extractor: &extractor, emit: emit)
    }

    /// A block thread: the next block read, and passed on when it is its turn, until none is left.
    private func work(_ schedule: Schedule, _ boundaries: [Int], emit: (MediaEvent) -> Void) {
        while let index = schedule.nextToRead() {
            let block = read(block: index, boundaries)
            if let inOrder = schedule.read(index, block) { take(block, index, inOrder, schedule, boundaries, emit: emit) }
        }
    }

    /// Passes on `block`, whose turn the caller holds, then the blocks after it left by their
    /// readers, then lets the turn go.
    private func take(_ block: Block, _ index: Int, _ inOrder: InOrder, _ schedule: Schedule, _ boundaries: [Int],
                      emit: (MediaEvent) -> Void) {
        var (block, index, inOrder) = (block, index, inOrder)
        while true {
            inOrder.take(block, index, boundaries, self, emit: emit)
            guard let next = schedule.pass(inOrder, after: index) else { return }
            (block, index) = (next, index + 1)
        }
    }

    private func finish(_ inOrder: InOrder, extractor: inout MediaExtractor, emit: (MediaEvent) -> Void) -> Outcome {
        extractor.finish(emit: emit)
        // As a scan read in one pass says it: what was read is reported, then the error.
        if let failure = inOrder.failure {
            let cause = FetchFailure(error: failure, attempts: 1)
            emit(.failure(InputFailure(source: input, .readFailed(afterBytes: Int64(inOrder.bytes), cause))))
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
                try LocalFile.read(scan.input, range: ByteRange(offset: from, length: to - from), limit: .max, resource: .input,
                                   interrupt: scan.interrupt) { chunk in
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

    /// Which block is read next and whose turn it is to be passed on; the scan's state in stream
    /// order goes with the turn. At most `ahead` blocks past the turn are read or left waiting.
    // Unchecked: every var is read and written under `condition`.
    private final class Schedule: @unchecked Sendable {
        private let condition = NSCondition()
        private let blocks: Int
        private let ahead: Int
        private var nextRead = 1
        /// The block whose turn it is; `blocks` once every block has had its turn.
        private var turn = 0
        /// A thread is passing on the block whose turn it is (block 0's is the scan's own task).
        private var turnHeld = true
        /// Blocks read before their turn, by index.
        private var waiting: [Int: Block] = [:]
        private var inOrder: InOrder

        init(blocks: Int, ahead: Int, _ inOrder: InOrder) {
            self.blocks = blocks
            self.ahead = ahead
            self.inOrder = inOrder
        }

        /// The next block to read; `nil` when all have been.
        func nextToRead() -> Int? {
            condition.lock()
            defer { condition.unlock() }
            while nextRead < blocks, nextRead > turn + ahead { condition.wait() }
            guard nextRead < blocks else { return nil }
            defer { nextRead += 1 }
            return nextRead
        }

        /// Block `index` has been read: the state to pass it on from when its turn has come (the
        /// caller holds the turn), else `nil` (it waits for the thread that passes on the one before).
        func read(_ index: Int, _ block: Block) -> InOrder? {
            condition.lock()
            defer { condition.unlock() }
            guard index == turn, !turnHeld else {
                waiting[index] = block
                return nil
            }
            turnHeld = true
            return inOrder
        }

        /// Block `index` has been passed on, leaving `inOrder`: the next block when it was read
        /// already (the caller holds its turn), else `nil` (the turn is let go).
        func pass(_ inOrder: InOrder, after index: Int) -> Block? {
            condition.lock()
            defer {
                condition.broadcast()
                condition.unlock()
            }
            turn = index + 1
            if let next = waiting.removeValue(forKey: turn) { return next }
            self.inOrder = inOrder
            turnHeld = false
            return nil
        }

        /// The state after the last block, once every block has had its turn.
        func end() -> InOrder {
            condition.lock()
            defer { condition.unlock() }
            while turn < blocks || turnHeld { condition.wait() }
            return inOrder
        }
    }

    /// The caller's `emit`, called from the block threads in turn. Let go of before `run` returns.
    // Unchecked: `body` is called by the thread whose turn it is, one at a time, and cleared after.
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
                extractor = TransportStreamExtractor(origin: TagOrigin(source: input), startingAt: Int64(lead), programs: programs)
                try LocalFile.read(input, range: ByteRange(offset: lead, length: first - lead), limit: .max, resource: .input,
                                   interrupt: interrupt) { chunk in
                    extractor.skim(chunk)
                }
                if extractor.hasSettled || lead == 0 { break }
            }
            block.start = extractor
            var overflowed = false
            try LocalFile.read(input, range: ByteRange(offset: first, length: boundaries[index + 1] - first), limit: .max, resource: .input,
                               interrupt: interrupt) { chunk in
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
