/// Reads the segments of one media playlist in order, each as its bytes arrive, keeping what
/// spans them: the MPEG-TS extractor's state (a tag cut by a segment boundary is joined across
/// it) and the key cache. The state is dropped at a discontinuity or a gap in the media sequence.
/// Memory does not grow with a segment's size: only its first bytes (to tell its form, find its
/// start PTS and probe its streams) and what an extractor needs for the next tag are held.
///
/// One task reads through it, a segment at a time.
package final class SegmentReader {
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
        /// Packed audio or fMP4; `nil` for MPEG-TS, which goes through the playlist's extractor.
        var extractor: (any TagExtractor)?
        var byteCount: Int64 = 0
        var streams: [StreamProbe.Stream] = []
        var foundTag = false
        /// Held until the attempt ends (a retry drops them); bounded, for a hostile segment of
        /// millions of tiny tags: a Nielsen tag comes every few seconds.
        var events: [MediaEvent] = []
        var dropped = 0
        static let maximumEvents = 100_000

        mutating func collect(_ event: MediaEvent) {
            if case .tag = event { foundTag = true }
            guard events.count < Self.maximumEvents else {
                dropped += 1
                return
            }
            events.append(event)
        }

        /// The events, and a failure for those dropped.
        func takeEvents(source: String, segment: String) -> [MediaEvent] {
            guard dropped > 0 else { return events }
            return events + [.failure(InputFailure(source: source, segment: segment, .eventsDropped(kept: Self.maximumEvents, dropped: dropped)))]
        }
    }

    private let source: String
    private var loader: SegmentLoader
    private let interrupt: Interrupt
    private var transportStream: TransportStreamExtractor
    private var previous: Segment?
    /// A TS packet cut by the end of a sub-range (`EXT-X-BYTERANGE`), kept for the next
    /// sub-range of the same resource, which holds the rest of it.
    private var cutPacket: (uri: String, end: Int, bytes: [UInt8])?

    /// `playlist` is where the segments are listed (references are checked against it).
    public init(source: String, playlist: String, targetDuration: Double?, fetcher: Fetcher) {
        self.source = source
        loader = SegmentLoader(fetcher: fetcher, playlist: playlist, targetDuration: targetDuration)
        interrupt = fetcher.interrupt
        transportStream = TransportStreamExtractor(origin: TagOrigin(source: source))
    }

    /// Emits the tags of `segment`; `nil` when it could not be read (and a failure was emitted,
    /// after whatever its bytes up to the failure held). `probeStreams` asks libavformat for its
    /// streams' frame rates.
    public func read(_ segment: Segment, probeStreams: Bool = false, emit: (MediaEvent) -> Void) async -> SegmentRead? {
        let origin = TagOrigin(source: source, segment: SegmentOrigin(
            uri: segment.uri, mediaSequence: segment.mediaSequence,
            discontinuitySequence: segment.discontinuitySequence, programDateTime: segment.programDateTime,
            duration: segment.duration))
        if let previous, segment.mediaSequence != previous.mediaSequence + 1
            || segment.discontinuitySequence != previous.discontinuitySequence {
            finish(emit: emit)
        }
        previous = segment
        if let note = segment.note { emit(.warning(InputFailure(source: source, segment: segment.uri, .segmentNote(note)))) }
        let failed = { (error: SegmentLoadError) in
            InputFailure(source: self.source, segment: segment.uri, .segmentSkipped(mediaSequence: segment.mediaSequence, error))
        }
        var initSegment: [UInt8]?
        if let uri = segment.mapURI {
            do throws(SegmentLoadError) { initSegment = try await loader.initSegment(at: uri, range: segment.mapByteRange) } catch {
                finish(emit: emit)
                emit(.failure(failed(error)))
                return nil
            }
        }
        let carried = takeCutPacket(continuing: segment, emit: emit)
        let saved = transportStream
        let prefixLength = probeStreams ? StreamProbe.prefixBytes : SegmentStartPTS.bytesScanned
        var reading = Reading(origin: origin)
        do throws(SegmentLoadError) {
            try await loader.load(segment, restart: {
                transportStream = saved
                reading = Reading(origin: origin)
            }) { chunk in
                reading.byteCount += Int64(chunk.count)
                if reading.started { return feed(chunk, &reading) }
                reading.prefix.append(contentsOf: chunk)
                if reading.prefix.count >= prefixLength {
                    start(&reading, segment: segment, carried: carried, initSegment: initSegment, probeStreams: probeStreams)
                }
            }
        } catch {
            end(&reading, segment: segment, carried: carried, initSegment: initSegment, keepingCut: false)
            reading.takeEvents(source: source, segment: segment.uri).forEach(emit)
            finish(emit: emit)
            emit(.failure(failed(error)))
            return nil
        }
        end(&reading, segment: segment, carried: carried, initSegment: initSegment, probeStreams: probeStreams,
            keepingCut: segment.byteRange != nil)
        reading.takeEvents(source: source, segment: segment.uri).forEach(emit)
        if let segment = reading.origin.segment { emit(.segment(segment)) }
        return SegmentRead(origin: reading.origin, streams: reading.streams,
                           hasTimedID3: reading.extractor == nil ? transportStream.hasTimedID3Stream : reading.foundTag,
                           byteCount: reading.byteCount)
    }

    /// Hands over whatever is still waiting for a continuation that will not come.
    public func finish(emit: (MediaEvent) -> Void) {
        _ = takeCutPacket(continuing: nil, emit: emit)
        transportStream.finish(emit: emit)
        transportStream = TransportStreamExtractor(origin: TagOrigin(source: source))
    }

    /// The bytes of a packet the last sub-range cut, when `segment` is the sub-range that follows
    /// it in the same resource; otherwise they are read as the end of the input they are.
    private func takeCutPacket(continuing segment: Segment?, emit: (MediaEvent) -> Void) -> [UInt8] {
        guard let cut = cutPacket else { return [] }
        cutPacket = nil
        if let segment, segment.uri == cut.uri, segment.byteRange?.offset == cut.end { return cut.bytes }
        transportStream.readCut(cut.bytes, at: Int64(cut.end - cut.bytes.count), emit: emit)
        return []
    }

    /// The form is told from the first bytes: packed audio and fMP4 segments stand alone; only
    /// MPEG-TS carries state across segments.
    private func start(_ reading: inout Reading, segment: Segment, carried: [UInt8], initSegment: [UInt8]?,
                       probeStreams: Bool) {
        reading.started = true
        let prefix = reading.prefix
        reading.prefix = []
        let form = initSegment != nil ? .fragmentedMP4 : MediaForm.sniff(carried + prefix)
        if let form, form != .transportStream {
            reading.extractor = form.makeExtractor(origin: reading.origin, initSegment: initSegment)
        } else {
            reading.origin.segment?.startPTS = SegmentStartPTS.find(in: carried + prefix)
            // Offsets in messages are the resource's: a sub-range starts inside it.
            transportStream.beginUnit(reading.origin, at: Int64(segment.byteRange?.offset ?? 0), continuing: carried)
        }
        if probeStreams { reading.streams = (try? StreamProbe.streams(in: prefix, interrupt: interrupt)) ?? [] }
        prefix.withUnsafeBufferPointer { feed($0, &reading) }
    }

    private func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ reading: inout Reading) {
        var events: [MediaEvent] = []
        if reading.extractor != nil {
            reading.extractor!.feed(chunk) { events.append($0) }
        } else {
            transportStream.feed(chunk) { events.append($0) }
        }
        events.forEach { reading.collect($0) }
    }

    /// With `keepingCut` (a sub-range's segment), a packet its end cuts is kept for the next sub-range.
    private func end(_ reading: inout Reading, segment: Segment, carried: [UInt8], initSegment: [UInt8]?,
                     probeStreams: Bool = false, keepingCut: Bool) {
        if !reading.started { start(&reading, segment: segment, carried: carried, initSegment: initSegment, probeStreams: probeStreams) }
        if reading.extractor != nil {
            var events: [MediaEvent] = []
            reading.extractor!.finish { events.append($0) }
            events.forEach { reading.collect($0) }
            return
        }
        var events: [MediaEvent] = []
        let cut = transportStream.endUnit(keepingCut: keepingCut) { events.append($0) }
        if !cut.isEmpty, let range = segment.byteRange { cutPacket = (segment.uri, range.end, cut) }
        events.forEach { reading.collect($0) }
    }
}
