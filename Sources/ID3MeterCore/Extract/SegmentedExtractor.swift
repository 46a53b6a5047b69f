import FoundationEssentials

/// The extractor for a presentation's segments (an HLS media playlist's, in order): each
/// segment's form is told from its first bytes, as `MediaExtractor` tells an input's; packed
/// audio and fMP4 segments are read each on its own, and MPEG-TS keeps its state from one
/// segment to the next, so that a tag cut by a segment boundary is joined to the rest of it.
/// A packet cut by the end of a sub-range (`EXT-X-BYTERANGE`) waits for the next sub-range of
/// the same resource, which holds the rest of it.
///
/// Bytes in, events out, like every extractor, but a segment at a time: `begin` a segment,
/// `feed` its bytes as they arrive, `end` it (or `append` a whole segment); `finish` when no
/// segment follows, or before one that does not follow (a discontinuity). Each tag's origin is
/// the segment its PES began in. Not a `TagExtractor`: bytes fed outside a segment have no
/// origin. A segment read again from its start (a retry) begins again from a copy of the
/// extractor taken after `begin`.
///
/// For a backend that stores segments one by one: fed to one `MediaExtractor` each, a tag cut
/// by a boundary is two broken halves; fed here, it is one tag.
public struct SegmentedExtractor: Sendable {
    /// What a segment's bytes showed, once it has ended.
    package struct SegmentEnd {
        /// The segment's origin, its first PTS found (MPEG-TS).
        package var origin: TagOrigin
        /// A timed-ID3 stream declared (MPEG-TS), or any tag read (packed audio, fMP4).
        package var hasTimedID3: Bool
        /// The first bytes of a whole resource of no form the meter reads (an error page
        /// served with 200): nothing of it was read. `nil` for a segment of a known form.
        package var unknownForm: [UInt8]?
    }

    /// The segment being read.
    private struct Current {
        var origin: TagOrigin
        var initSegment: [UInt8]?
        /// The sub-range of its resource it is, if it is one.
        var range: ByteRange?
        /// The front of a packet the previous sub-range ended inside.
        var carried: [UInt8]
        /// Its first bytes, until its form is known and its start PTS found.
        var prefix: [UInt8] = []
        var started = false
        /// Packed audio or fMP4; `nil` for MPEG-TS, which goes through `transportStream`.
        var extractor: (any TagExtractor)?
        var foundTag = false
        /// Its first bytes, when they are of no known form and begin a resource.
        var unknownForm: [UInt8]?
    }

    private let source: String
    private let programs: ProgramSelection
    private var transportStream: TransportStreamExtractor
    private var current: Current?
    /// A TS packet cut by the end of a sub-range, kept for the next sub-range of its resource.
    private var cutPacket: (uri: String, end: Int, bytes: [UInt8])?
    /// `emsg` events handed out in earlier segments, across discontinuities and Periods: the
    /// boxes packagers repeat in each segment an event spans are that event once.
    private var repeats = RepeatedEvents()
    /// Those of the segment being read: a message of several tags gives each of them.
    private var segmentEvents: Set<InbandEvent> = []

    /// An extractor for the segments of `source`, the input as the user named it, reading
    /// `programs` of MPEG-TS segments.
    public init(source: String, programs: ProgramSelection = .all) {
        self.source = source
        self.programs = programs
        transportStream = TransportStreamExtractor(origin: TagOrigin(source: source), programs: programs)
    }

    /// A segment starts, straight after the previous one (the next media sequence, the same
    /// discontinuity): MPEG-TS state carries over. Before a segment that does not follow, call
    /// `finish`. `range`: the sub-range of its resource it is, if it is one.
    package mutating func begin(_ origin: TagOrigin, range: ByteRange?, initSegment: [UInt8]?, emit: (MediaEvent) -> Void) {
        let uri = origin.segment?.uri ?? origin.source
        segmentEvents = []
        current = Current(origin: origin, initSegment: initSegment, range: range,
                          carried: takeCutPacket(continuing: uri, at: range?.offset, emit: emit))
    }

    /// A segment starts, straight after the previous one: `origin` is where its tags were
    /// found (its `segment` names it), `initSegment` its fMP4 initialization segment if it has
    /// one. Events of the segment before it that were waiting on this one's bytes may come.
    public mutating func begin(_ origin: TagOrigin, initSegment: [UInt8]? = nil, emit: (MediaEvent) -> Void) {
        begin(origin, range: nil, initSegment: initSegment, emit: emit)
    }

    /// The segment's bytes ended: what they complete is handed out; a TS tag its end cuts waits
    /// for the next segment.
    /// A segment of no form the meter reads is a failure (`unknownForm`).
    public mutating func end(emit: (MediaEvent) -> Void) {
        let origin = current?.origin
        if end(keepingCut: false, emit: emit)?.unknownForm != nil, let origin {
            emit(.failure(InputFailure(source: origin.source, segment: origin.segment?.uri, .unknownForm)))
        }
    }

    /// A whole stored segment: `begin`, `feed` and `end` in one.
    public mutating func append(_ segment: some ContiguousBytes, origin: TagOrigin, initSegment: [UInt8]? = nil,
                                emit: (MediaEvent) -> Void) {
        begin(origin, initSegment: initSegment, emit: emit)
        feed(segment, emit: emit)
        end(emit: emit)
    }

    /// The segment's next bytes, in order, where they lie (`[UInt8]`, `Data`, a raw buffer);
    /// between `begin` and `end` only.
    public mutating func feed(_ bytes: some ContiguousBytes, emit: (MediaEvent) -> Void) {
        bytes.withUnsafeBytes { raw in raw.withMemoryRebound(to: UInt8.self) { feed($0, emit: emit) } }
    }

    /// The segment's next bytes, in order; between `begin` and `end` only.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void) {
        // Taken out, not copied: a copy left in `current` would make every append copy the prefix.
        guard var segment = current.take() else { return }
        defer { current = segment }
        if segment.started { return pass(bytes, &segment, emit: emit) }
        segment.prefix.append(contentsOf: bytes)
        if segment.prefix.count >= SegmentStartPTS.bytesScanned { start(&segment, emit: emit) }
    }

    /// The segment's bytes ended (or stopped: `keepingCut` false after a failure). With
    /// `keepingCut` (a sub-range the next one continues), a packet its end cuts is kept.
    package mutating func end(keepingCut: Bool, emit: (MediaEvent) -> Void) -> SegmentEnd? {
        guard var segment = current.take() else { return nil }
        if !segment.started { start(&segment, emit: emit) }
        if let unknown = segment.unknownForm { return SegmentEnd(origin: segment.origin, hasTimedID3: false, unknownForm: unknown) }
        if var extractor = segment.extractor {
            var found = segment.foundTag
            extractor.finish { event in
                if case .tag = event { found = true }
                if !isRepeat(event) { emit(event) }
            }
            if segment.origin.segment?.startPTS == nil { segment.origin.segment?.startPTS = extractor.firstPTS }
            return SegmentEnd(origin: segment.origin, hasTimedID3: found)
        }
        let cut = transportStream.endUnit(keepingCut: keepingCut, emit: emit)
        if !cut.isEmpty, let uri = segment.origin.segment?.uri, let range = segment.range {
            cutPacket = (uri, range.end, cut)
        }
        return SegmentEnd(origin: segment.origin, hasTimedID3: transportStream.hasTimedID3Stream)
    }

    /// No segment follows (or the next does not continue these): what still waits is read.
    public mutating func finish(emit: (MediaEvent) -> Void) {
        _ = takeCutPacket(continuing: nil, at: nil, emit: emit)
        transportStream.finish(emit: emit)
        transportStream = TransportStreamExtractor(origin: TagOrigin(source: source), programs: programs)
    }

    /// The bytes of the packet the last sub-range cut, when the segment at `uri`, `offset` is
    /// the sub-range that follows it; otherwise they are read as the end of the input they are.
    private mutating func takeCutPacket(continuing uri: String?, at offset: Int?, emit: (MediaEvent) -> Void) -> [UInt8] {
        guard let cut = cutPacket else { return [] }
        cutPacket = nil
        if let uri, uri == cut.uri, offset == cut.end { return cut.bytes }
        transportStream.readCut(cut.bytes, at: Int64(cut.end - cut.bytes.count), emit: emit)
        return []
    }

    /// The form is told from the first bytes: packed audio and fMP4 segments stand alone; only
    /// MPEG-TS carries state across segments. A whole resource of no known form is not read
    /// (a player's demuxer fails it); a sub-range's bytes of no known form are read as MPEG-TS,
    /// the stream's continuation: one that starts inside a packet does not sniff as one, and
    /// the demuxer says what it cannot read.
    private mutating func start(_ segment: inout Current, emit: (MediaEvent) -> Void) {
        segment.started = true
        let prefix = segment.prefix
        segment.prefix = []
        let form = segment.initSegment != nil ? .fragmentedMP4 : MediaForm.sniff(segment.carried + prefix)
        // A resource shorter than the packets sync is checked over starts with one at least.
        if form == nil, segment.range == nil, segment.carried.isEmpty, prefix.first != 0x47 {
            segment.unknownForm = Array(prefix.prefix(Self.unknownFormShown))
            return
        }
        if let form, form != .transportStream {
            segment.extractor = form.makeExtractor(origin: segment.origin, initSegment: segment.initSegment)
        } else {
            segment.origin.segment?.startPTS = SegmentStartPTS.find(in: segment.carried + prefix)
            // Offsets in messages are the resource's: a sub-range starts inside it.
            transportStream.beginUnit(segment.origin, at: Int64(segment.range?.offset ?? 0), continuing: segment.carried)
        }
        prefix.withUnsafeBufferPointer { pass($0, &segment, emit: emit) }
    }

    /// How many of an unreadable segment's first bytes its failure shows.
    private static let unknownFormShown = 24

    private mutating func pass(_ bytes: UnsafeBufferPointer<UInt8>, _ segment: inout Current, emit: (MediaEvent) -> Void) {
        guard segment.unknownForm == nil else { return }
        guard segment.extractor != nil else { return transportStream.feed(bytes, emit: emit) }
        var found = false
        segment.extractor!.feed(bytes) { event in
            if case .tag = event { found = true }
            if !isRepeat(event) { emit(event) }
        }
        if found { segment.foundTag = true }
    }

    /// A tag of an `emsg` event an earlier segment handed out.
    private mutating func isRepeat(_ event: MediaEvent) -> Bool {
        guard case .tag(let timed) = event, let inband = timed.carriage?.event,
              !segmentEvents.contains(inband) else { return false }
        if repeats.isRepeat(inband) { return true }
        segmentEvents.insert(inband)
        return false
    }
}
