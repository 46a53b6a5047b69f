/// Reads the segments of one media playlist in order, each as its bytes arrive: the I/O around
/// a `SegmentedExtractor` (fetches, AES-128 keys and their cache, initialisation segments, a
/// retry from the segment's start). The extractor's state spans segments and is finished at a
/// discontinuity or a gap in the media sequence. Memory does not grow with a segment's size:
/// only its first bytes (to tell its form, find its start PTS and probe its streams) and what
/// an extractor needs for the next tag are held.
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

    /// One attempt at a segment. Its events are held until it ends (a retry drops them), to a
    /// bound, for a hostile segment of millions of tiny tags: a Nielsen tag comes every few seconds.
    private struct Attempt {
        var events: [MediaEvent] = []
        var dropped = 0
        var byteCount: Int64 = 0
        /// Its first bytes, while libavformat is to probe its streams.
        var probePrefix: [UInt8] = []
        static let maximumEvents = 100_000

        mutating func collect(_ event: MediaEvent) {
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
    private var extractor: SegmentedExtractor
    private var previous: Segment?

    /// `playlist` is where the segments are listed (references are checked against it);
    /// `programs`, which programs of MPEG-TS segments are read.
    public init(source: String, playlist: String, targetDuration: Double?, fetcher: Fetcher, programs: ProgramSelection = .all) {
        self.source = source
        loader = SegmentLoader(fetcher: fetcher, playlist: playlist, targetDuration: targetDuration)
        interrupt = fetcher.interrupt
        extractor = SegmentedExtractor(source: source, programs: programs)
    }

    /// Emits the tags of `segment`; `nil` when it could not be read (and a failure was emitted,
    /// after whatever its bytes up to the failure held). `probeStreams` asks libavformat for its
    /// streams' frame rates. `retrying` off: one attempt (another copy is there to try).
    public func read(_ segment: Segment, probeStreams: Bool = false, retrying: Bool = true, emit: (MediaEvent) -> Void) async -> SegmentRead? {
        let origin = TagOrigin(source: source, segment: Self.origin(of: segment))
        follow(segment, emit: emit)
        if let note = segment.note { emit(.warning(InputFailure(source: source, segment: segment.uri, .segmentNote(note)))) }
        let failed = { (error: SegmentLoadError) in
            InputFailure(source: self.source, segment: segment.uri, .segmentSkipped(mediaSequence: segment.mediaSequence, error))
        }
        var initSegment: [UInt8]?
        if let uri = segment.mapURI {
            do throws(SegmentLoadError) { initSegment = try await loader.initSegment(at: uri, range: segment.mapByteRange, retrying: retrying) } catch {
                extractor.finish(emit: emit)
                emit(.failure(failed(error)))
                return nil
            }
        }
        extractor.begin(origin, range: segment.byteRange, initSegment: initSegment, emit: emit)
        let saved = extractor
        var attempt = Attempt()
        do throws(SegmentLoadError) {
            try await loader.load(segment, retrying: retrying, restart: {
                extractor = saved
                attempt = Attempt()
            }) { chunk in
                attempt.byteCount += Int64(chunk.count)
                if probeStreams, attempt.probePrefix.count < StreamProbe.prefixBytes { attempt.probePrefix.append(contentsOf: chunk) }
                extractor.feed(chunk) { attempt.collect($0) }
            }
        } catch {
            _ = extractor.end(keepingCut: false) { attempt.collect($0) }
            attempt.takeEvents(source: source, segment: segment.uri).forEach(emit)
            extractor.finish(emit: emit)
            emit(.failure(failed(error)))
            return nil
        }
        let streams = probeStreams ? (try? StreamProbe.streams(in: attempt.probePrefix, interrupt: interrupt)) ?? [] : []
        let end = extractor.end(keepingCut: segment.byteRange != nil) { attempt.collect($0) }
        attempt.takeEvents(source: source, segment: segment.uri).forEach(emit)
        if let unknown = end?.unknownForm {
            extractor.finish(emit: emit)
            emit(.failure(failed(.unreadableSegment(bytes: attempt.byteCount, begins: unknown))))
            return nil
        }
        let read = end?.origin ?? origin
        if let segment = read.segment { emit(.segment(segment)) }
        return SegmentRead(origin: read, streams: streams, hasTimedID3: end?.hasTimedID3 ?? false, byteCount: attempt.byteCount)
    }

    /// Passes an `EXT-X-GAP` segment without fetching it: its media time, without tags. What
    /// waited for a continuation is handed over, since the media that would carry it is missing.
    public func pass(gap segment: Segment, emit: (MediaEvent) -> Void) {
        follow(segment, emit: emit)
        extractor.finish(emit: emit)
        emit(.segment(Self.origin(of: segment)))
    }

    static func origin(of segment: Segment) -> TagOrigin.Segment {
        var origin = TagOrigin.Segment(uri: segment.uri, mediaSequence: segment.mediaSequence, discontinuitySequence: segment.discontinuitySequence,
                                       programDateTime: segment.programDateTime, duration: segment.duration, isGap: segment.isGap)
        origin.dash = segment.dash
        origin.interstitial = segment.interstitial
        return origin
    }

    /// `segment` comes next: the extractor's state is finished when it does not continue the last.
    private func follow(_ segment: Segment, emit: (MediaEvent) -> Void) {
        // An interstitial's segments share the number of the primary segment before the break:
        // one asset's follow one another.
        let continues = segment.interstitial.map { $0 == previous?.interstitial }
            ?? (segment.mediaSequence == (previous?.mediaSequence ?? .min) + 1 && segment.discontinuitySequence == previous?.discontinuitySequence)
        if previous != nil, !continues {
            extractor.finish(emit: emit)
        }
        previous = segment
    }

    /// Hands over whatever is still waiting for a continuation that will not come.
    public func finish(emit: (MediaEvent) -> Void) {
        extractor.finish(emit: emit)
    }
}
