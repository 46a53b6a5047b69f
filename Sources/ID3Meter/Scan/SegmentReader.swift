/// Reads the segments of one media playlist in order, keeping what spans them: the MPEG-TS
/// demuxer's state (a tag cut by a segment boundary is joined across it) and the key cache.
/// The state is dropped at a discontinuity or a gap in the media sequence.
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

    private let source: String
    private let loader: SegmentLoader
    private let interrupt: Interrupt
    private var demuxer = TimedID3Demuxer()
    /// Where the segments still referred to by the demuxer's state came from, by unit.
    private var origins: [Int: TagOrigin] = [:]
    private var previous: Segment?
    private var unit = 0

    public init(source: String, fetcher: Fetcher) {
        self.source = source
        loader = SegmentLoader(fetcher: fetcher)
        interrupt = fetcher.interrupt
    }

    /// Emits the tags of `segment`; `nil` when it could not be read (and a failure was emitted).
    /// `probeStreams` asks libavformat for its streams' frame rates.
    public func read(_ segment: Segment, probeStreams: Bool = false, emit: (ScanEvent) -> Void) -> SegmentRead? {
        var origin = TagOrigin(source: source, segment: SegmentOrigin(
            uri: segment.uri, mediaSequence: segment.mediaSequence,
            discontinuitySequence: segment.discontinuitySequence, programDateTime: segment.programDateTime))
        if let previous, segment.mediaSequence != previous.mediaSequence + 1
            || segment.discontinuitySequence != previous.discontinuitySequence {
            finish(emit: emit)
        }
        previous = segment
        let bytes: [UInt8], initSegment: [UInt8]?
        do {
            bytes = try loader.load(segment)
            initSegment = try segment.mapURI.map { uri throws(SegmentLoadError) in try loader.initSegment(at: uri) }
        } catch {
            finish(emit: emit)
            emit(.failure(InputFailure(source: source, segment: segment.uri,
                                       reason: "media sequence \(segment.mediaSequence) skipped: \(error.reason)")))
            return nil
        }
        // Packed audio and fMP4 segments stand alone; only MPEG-TS carries state across.
        if let form = initSegment != nil ? .fragmentedMP4 : WholeFileForm.allCases.first(where: { $0.recognises(bytes) }) {
            let found = form.read(bytes, initSegment: initSegment, origin: origin, emit: emit)
            if let segment = origin.segment { emit(.segment(segment)) }
            return SegmentRead(origin: origin, streams: [], hasTimedID3: found, byteCount: Int64(bytes.count))
        }
        origin.segment?.startPTS = SegmentStartPTS.find(in: bytes)
        unit += 1
        origins[unit] = origin
        demuxer.unit = unit
        func deliver(_ event: TimedID3Demuxer.Event) {
            event.scanEvents { origins[$0] ?? origin }.forEach(emit)
        }
        _ = bytes.withUnsafeBufferPointer { demuxer.demux($0, at: 0, isFinal: true, emit: deliver) }
        demuxer.endOfUnit(emit: deliver)
        // A tag is not left waiting on more than a few segments; older origins can go.
        origins = origins.filter { $0.key > unit - 4 }
        if let segment = origin.segment { emit(.segment(segment)) }
        let streams = probeStreams ? (try? StreamProbe.streams(in: bytes, interrupt: interrupt)) ?? [] : []
        return SegmentRead(origin: origin, streams: streams, hasTimedID3: demuxer.hasTimedID3Stream, byteCount: Int64(bytes.count))
    }

    /// Hands over whatever is still waiting for a continuation that will not come.
    public func finish(emit: (ScanEvent) -> Void) {
        demuxer.flush { event in
            event.scanEvents { self.origins[$0] ?? TagOrigin(source: self.source) }.forEach(emit)
        }
        demuxer = TimedID3Demuxer()
        origins.removeAll()
    }
}
