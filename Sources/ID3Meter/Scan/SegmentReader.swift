/// Reads the segments of one media playlist in order, each as its bytes arrive, keeping what
/// spans them: the MPEG-TS demuxer's state (a tag cut by a segment boundary is joined across
/// it) and the key cache. The state is dropped at a discontinuity or a gap in the media sequence.
/// Memory does not grow with a segment's size: only its first bytes (to tell its form, find its
/// start PTS and probe its streams) and what a reader needs for the next tag are held.
///
/// Not thread-safe: Sendable only so that a `BlockingExecutor`, which runs one call at a
/// time, can own it.
public final class SegmentReader: @unchecked Sendable {
    /// What reading a segment found besides its tags.
    public struct SegmentRead: Sendable {
        public var origin: TagOrigin
        /// With frame rates, when probed.
        public var streams: [StreamProbe.Stream]
        /// A timed-ID3 stream in MPEG-TS, or any ID3 tag in packed audio or fMP4.
        public var hasTimedID3: Bool
        public var byteCount: Int64
    }

    /// One segment being read.
    private struct Reading {
        var origin: TagOrigin
        /// The first bytes, until the form is known.
        var prefix: [UInt8] = []
        var started = false
        /// Packed audio or fMP4; `nil` for MPEG-TS, which goes through the playlist's demuxer.
        var reader: (any ChunkedReader)?
        /// MPEG-TS bytes short of a whole packet, kept for the next chunk.
        var carry: [UInt8] = []
        var demuxed: Int64 = 0
        var byteCount: Int64 = 0
        var streams: [StreamProbe.Stream] = []
        var foundTag = false
        var events: [ScanEvent] = []

        mutating func collect(_ event: ScanEvent) {
            if case .tag = event { foundTag = true }
            events.append(event)
        }
    }

    private let source: String
    private let loader: SegmentLoader
    private let interrupt: Interrupt
    private var demuxer = TimedID3Demuxer()
    /// Where the segments still referred to by the demuxer's state came from, by unit.
    private var origins: [Int: TagOrigin] = [:]
    private var previous: Segment?
    private var unit = 0
    /// A TS packet cut by the end of a sub-range (`EXT-X-BYTERANGE`), kept for the next
    /// sub-range of the same resource, which holds the rest of it.
    private var cutPacket: (uri: String, end: Int, bytes: [UInt8])?

    /// `playlist` is where the segments are listed (references are checked against it).
    public init(source: String, playlist: String, targetDuration: Double?, fetcher: Fetcher) {
        self.source = source
        loader = SegmentLoader(fetcher: fetcher, playlist: playlist, targetDuration: targetDuration)
        interrupt = fetcher.interrupt
    }

    /// Emits the tags of `segment`; `nil` when it could not be read (and a failure was emitted,
    /// after whatever its bytes up to the failure held). `probeStreams` asks libavformat for its
    /// streams' frame rates.
    public func read(_ segment: Segment, probeStreams: Bool = false, emit: (ScanEvent) -> Void) -> SegmentRead? {
        let origin = TagOrigin(source: source, segment: SegmentOrigin(
            uri: segment.uri, mediaSequence: segment.mediaSequence,
            discontinuitySequence: segment.discontinuitySequence, programDateTime: segment.programDateTime))
        if let previous, segment.mediaSequence != previous.mediaSequence + 1
            || segment.discontinuitySequence != previous.discontinuitySequence {
            finish(emit: emit)
        }
        previous = segment
        if let note = segment.note { emit(.warning(InputFailure(source: source, segment: segment.uri, reason: note))) }
        let failed = { (reason: String) in
            InputFailure(source: self.source, segment: segment.uri, reason: "media sequence \(segment.mediaSequence) skipped: \(reason)")
        }
        let initSegment: [UInt8]?
        do {
            initSegment = try segment.mapURI.map { uri throws(SegmentLoadError) in try loader.initSegment(at: uri, range: segment.mapByteRange) }
        } catch {
            finish(emit: emit)
            emit(.failure(failed(error.reason)))
            return nil
        }
        unit += 1
        let carried = takeCutPacket(continuing: segment, emit: emit)
        let saved = (demuxer, origins)
        let prefixLength = probeStreams ? StreamProbe.prefixBytes : SegmentStartPTS.bytesScanned
        // Offsets in messages are the resource's: a sub-range starts inside it.
        let firstByte = Int64((segment.byteRange?.offset ?? 0) - carried.count)
        var reading = Reading(origin: origin, prefix: carried, demuxed: firstByte)
        do {
            try loader.load(segment, restart: {
                (demuxer, origins) = saved
                reading = Reading(origin: origin, prefix: carried, demuxed: firstByte)
            }) { chunk in
                reading.byteCount += Int64(chunk.count)
                if reading.started { return feed(chunk, &reading) }
                reading.prefix.append(contentsOf: chunk)
                if reading.prefix.count >= prefixLength { start(&reading, initSegment: initSegment, probeStreams: probeStreams) }
            }
        } catch {
            end(&reading, initSegment: initSegment, probeStreams: false)
            reading.events.forEach(emit)
            finish(emit: emit)
            emit(.failure(failed(error.reason)))
            return nil
        }
        end(&reading, initSegment: initSegment, probeStreams: probeStreams, keepingCutPacketOf: segment)
        reading.events.forEach(emit)
        if let segment = reading.origin.segment { emit(.segment(segment)) }
        return SegmentRead(origin: reading.origin, streams: reading.streams,
                           hasTimedID3: reading.reader == nil ? demuxer.hasTimedID3Stream : reading.foundTag,
                           byteCount: reading.byteCount)
    }

    /// Hands over whatever is still waiting for a continuation that will not come.
    public func finish(emit: (ScanEvent) -> Void) {
        _ = takeCutPacket(continuing: nil, emit: emit)
        demuxer.flush { event in
            event.scanEvents { self.origins[$0] ?? TagOrigin(source: self.source) }.forEach(emit)
        }
        demuxer = TimedID3Demuxer()
        origins.removeAll()
    }

    /// The bytes of a packet the last sub-range cut, when `segment` is the sub-range that follows
    /// it in the same resource; otherwise they are read as the end of the input they are.
    private func takeCutPacket(continuing segment: Segment?, emit: (ScanEvent) -> Void) -> [UInt8] {
        guard let cut = cutPacket else { return [] }
        cutPacket = nil
        if let segment, segment.uri == cut.uri, segment.byteRange?.offset == cut.end { return cut.bytes }
        cut.bytes.withUnsafeBufferPointer { bytes in
            _ = demuxer.demux(bytes, at: Int64(cut.end - cut.bytes.count), isFinal: true) { event in
                event.scanEvents { self.origins[$0] ?? TagOrigin(source: self.source) }.forEach(emit)
            }
        }
        return []
    }

    /// The form is told from the first bytes: packed audio and fMP4 segments stand alone; only
    /// MPEG-TS carries state across segments.
    private func start(_ reading: inout Reading, initSegment: [UInt8]?, probeStreams: Bool) {
        reading.started = true
        let prefix = reading.prefix
        reading.prefix = []
        if let form = initSegment != nil ? .fragmentedMP4 : MediaForm.sniff(prefix)?.wholeFileForm {
            reading.reader = form.makeReader(initSegment: initSegment, origin: reading.origin)
        } else {
            reading.origin.segment?.startPTS = SegmentStartPTS.find(in: prefix)
            origins[unit] = reading.origin
            demuxer.unit = unit
        }
        if probeStreams { reading.streams = (try? StreamProbe.streams(in: prefix, interrupt: interrupt)) ?? [] }
        prefix.withUnsafeBufferPointer { feed($0, &reading) }
    }

    private func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ reading: inout Reading) {
        if var reader = reading.reader {
            reader.feed(chunk) { reading.collect($0) }
            reading.reader = reader
            return
        }
        let origin = reading.origin
        var events: [ScanEvent] = []
        reading.carry.append(contentsOf: chunk)
        let used = reading.carry.withUnsafeBufferPointer { bytes in
            demuxer.demux(bytes, at: reading.demuxed, isFinal: false) { events += $0.scanEvents { self.origins[$0] ?? origin } }
        }
        reading.carry.removeFirst(used)
        reading.demuxed += Int64(used)
        events.forEach { reading.collect($0) }
    }

    /// With `keepingCutPacketOf` a sub-range's segment, a packet its end cuts is kept for the next sub-range.
    private func end(_ reading: inout Reading, initSegment: [UInt8]?, probeStreams: Bool, keepingCutPacketOf segment: Segment? = nil) {
        if !reading.started { start(&reading, initSegment: initSegment, probeStreams: probeStreams) }
        if let segment, let range = segment.byteRange, reading.reader == nil, !reading.carry.isEmpty {
            cutPacket = (segment.uri, range.end, reading.carry)
            reading.carry = []
        }
        if var reader = reading.reader {
            reader.finish { reading.collect($0) }
            reading.reader = reader
            return
        }
        let origin = reading.origin
        var events: [ScanEvent] = []
        func deliver(_ event: TimedID3Demuxer.Event) { events += event.scanEvents { self.origins[$0] ?? origin } }
        _ = reading.carry.withUnsafeBufferPointer { demuxer.demux($0, at: reading.demuxed, isFinal: true, emit: deliver) }
        reading.carry = []
        demuxer.endOfUnit(emit: deliver)
        events.forEach { reading.collect($0) }
        // A tag is not left waiting on more than a few segments; older origins can go.
        origins = origins.filter { $0.key > unit - 4 }
    }
}
