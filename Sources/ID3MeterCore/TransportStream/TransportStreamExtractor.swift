/// MPEG-TS as a `TagExtractor`: the bytes go through a `TimedID3Demuxer`, whole packets
/// straight from the caller's buffer, and only what ends short of a packet is held for the next
/// piece. The timed-ID3 packets become tags (or malformed reports) at their PTS.
///
/// For HLS, `SegmentedExtractor` has one read a playlist's segments in turn, each a unit with its own origin,
/// so that a tag cut by a segment boundary is joined to the rest of it in the next segment.
package struct TransportStreamExtractor: TagExtractor, Sendable, Equatable {
    /// What a demuxer may leave unused: less than two packets, plus a piece being topped up.
    private static let topUp = 4 * TransportStreamSync.packetSize

    private var demuxer: TimedID3Demuxer
    private var origin: TagOrigin
    /// Where the units still referred to by the demuxer's state came from.
    private var origins: [Int: TagOrigin]
    /// Bytes short of a whole packet (or of what resynchronising needs), kept for the next piece.
    private var carry: [UInt8] = []
    /// Where `carry` (or the next piece, when it is empty) starts in the resource.
    private var offset: Int64 = 0
    /// Off while `skim` runs: what the demuxer finds is not decoded into events.
    private var decodes = true

    /// A program map table declared a timed-ID3 stream.
    public var hasTimedID3Stream: Bool { demuxer.hasTimedID3Stream }

    /// An extractor for one MPEG-TS input; `origin` names it in every event; `programs` says
    /// which of a multi-program stream's programs are read.
    public init(origin: TagOrigin, programs: ProgramSelection = .all) {
        self.origin = origin
        origins = [0: origin]
        demuxer = TimedID3Demuxer(programs: programs)
    }

    /// An extractor that is given the input's bytes from `offset` on, knowing nothing of those
    /// before (a block of a big file read on a thread of its own).
    package init(origin: TagOrigin, startingAt offset: Int64, programs: ProgramSelection = .all) {
        self.init(origin: origin, programs: programs)
        self.offset = offset
    }

    /// It knows what bytes further back would have taught it (`TimedID3Demuxer.hasSettled`).
    package var hasSettled: Bool { demuxer.hasSettled }

    /// Everything it was given has been read: nothing waits for the rest of a packet.
    package var isBetweenPackets: Bool { carry.isEmpty }

    /// Takes `bytes` as `feed` does, into the same state, without decoding the tags it finds:
    /// the bytes before a block, read only to learn the state the block starts in.
    package mutating func skim(_ bytes: UnsafeBufferPointer<UInt8>) {
        decodes = false
        feed(bytes) { _ in }
        decodes = true
    }

    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void) {
        var rest = bytes[...]
        if !carry.isEmpty {
            // Top the held bytes up just enough to finish their packets, then go on from the piece itself.
            let taken = min(rest.count, Self.topUp)
            carry.append(contentsOf: rest.prefix(taken))
            let held = carry
            let used = held.withUnsafeBufferPointer { demux($0, isFinal: false, emit: emit) }
            let left = held.count - used
            guard left <= taken else {
                // The held bytes still wait on more (a sync byte near their end not yet checked
                // against the next packet's): the whole piece waits with them, none dropped.
                carry.removeFirst(used)
                carry.append(contentsOf: rest.dropFirst(taken))
                return
            }
            carry.removeAll(keepingCapacity: true)
            rest = rest.dropFirst(taken - left)
        }
        let piece = UnsafeBufferPointer(rebasing: rest)
        let used = demux(piece, isFinal: false, emit: emit)
        carry.append(contentsOf: piece[used...])
    }

    public mutating func finish(emit: (MediaEvent) -> Void) {
        readCarry(emit: emit)
        let places = places
        demuxer.flush { $0.decode(origin: places.origin, emit: emit) }
    }

    /// A new piece of the same stream (an HLS segment) starts, from `offset` in its resource;
    /// `cut` is the front of a packet the last sub-range of that resource ended inside.
    mutating func beginUnit(_ origin: TagOrigin, at offset: Int64, continuing cut: [UInt8] = []) {
        demuxer.unit += 1
        self.origin = origin
        origins[demuxer.unit] = origin
        self.offset = offset - Int64(cut.count)
        carry = cut
    }

    /// The piece ended. With `keepingCut` (a sub-range, continued by the next), a packet its end
    /// cuts is returned rather than read as the end of the input.
    mutating func endUnit(keepingCut: Bool, emit: (MediaEvent) -> Void) -> [UInt8] {
        var cut: [UInt8] = []
        if keepingCut { swap(&cut, &carry) } else { readCarry(emit: emit) }
        let places = places
        demuxer.endOfUnit { $0.decode(origin: places.origin, emit: emit) }
        // A tag is not left waiting on more than a few segments; older origins can go.
        let unit = demuxer.unit
        self.origins = origins.filter { $0.key > unit - 4 }
        return cut
    }

    /// The front of a packet whose rest will not come, at `offset` in its resource.
    mutating func readCut(_ bytes: [UInt8], at offset: Int64, emit: (MediaEvent) -> Void) {
        self.offset = offset
        carry = bytes
        readCarry(emit: emit)
    }

    private mutating func readCarry(emit: (MediaEvent) -> Void) {
        let held = carry
        carry = []
        _ = held.withUnsafeBufferPointer { demux($0, isFinal: true, emit: emit) }
    }

    private mutating func demux(_ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool, emit: (MediaEvent) -> Void) -> Int {
        let places = places, decodes = self.decodes
        let used = demuxer.demux(bytes, at: offset, isFinal: isFinal) { if decodes { $0.decode(origin: places.origin, emit: emit) } }
        offset += Int64(used)
        return used
    }

    /// The origins, as the demuxer's callback needs them. A reference: the callback is handed
    /// down for every packet the demuxer looks at, and a copy of the origins (strings) went with
    /// it each time.
    private final class Places: Sendable {
        let origins: [Int: TagOrigin]
        let current: TagOrigin

        init(origins: [Int: TagOrigin], current: TagOrigin) {
            self.origins = origins
            self.current = current
        }

        func origin(_ unit: Int) -> TagOrigin { origins[unit] ?? current }
    }

    private var places: Places { Places(origins: origins, current: origin) }
}
