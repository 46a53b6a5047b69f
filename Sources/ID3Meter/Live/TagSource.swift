import Foundation

/// The tags of one input as they become available, as an AsyncSequence: an HLS playlist
/// (live: followed as it slides; VOD: read through) segment by segment, or any other input
/// read as its bytes arrive, tag by tag. Waiting on the network holds no thread.
public struct TagSource<C: Clock>: AsyncSequence, Sendable where C.Duration == Duration {
    /// A playlist, file, URL or stream, as `id3-meter` takes it.
    public var input: String
    /// Chooses the variant and fetches, with its limits, retries and headers.
    public var scanner: TagScanner
    /// How many segments back from a live playlist's end to start, as players join (3 by default).
    public var liveStart: Int
    /// The media sequence to start at when the playlist still lists it (a checkpoint's).
    public var resumeAt: Int?
    public var clock: C

    /// A source of `input`'s events; `clock` times live playlist reloads and retries.
    public init(input: String, scanner: TagScanner = TagScanner(), liveStart: Int = 3, resumeAt: Int? = nil, clock: C) {
        self.input = input
        self.scanner = scanner
        self.liveStart = liveStart
        self.resumeAt = resumeAt
        self.clock = clock
    }

    /// Its element and failure: the input's events, and the failure that ended its reading,
    /// thrown (it cannot be opened, is of no form read here, its playlist cannot be had, too
    /// many segments were lost in a row). A failure the reading goes on after (a segment lost,
    /// damage) is a `.failure` event; warnings and notes are `.warning` events.
    public typealias Element = MediaEvent
    public typealias Failure = InputFailure

    /// The events as the reading task hands them over, the failure that ended it thrown.
    public struct Iterator: AsyncIteratorProtocol {
        private var reading: ReadingIterator<AsyncStream<MediaEvent>.Iterator>

        fileprivate init(_ events: AsyncStream<MediaEvent>.Iterator) { reading = ReadingIterator(events) }

        public mutating func next() async throws(InputFailure) -> MediaEvent? {
            try await reading.next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(InputFailure) -> MediaEvent? {
            try await reading.next(isolation: actor)
        }
    }

    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: MediaEvent.self)
        // One player session (its cookies, its interrupt) for the whole of `input`: ending this
        // iteration ends its reads, not those of another source made from the same scanner.
        var scanner = self.scanner
        scanner.fetcher = scanner.fetcher.session()
        let task = Task { [self, scanner] in
            await produce(scanner: scanner) { continuation.yield($0) }
            continuation.finish()
        }
        let interrupt = scanner.fetcher.interrupt
        continuation.onTermination = { _ in
            task.cancel()
            interrupt.cancel()
        }
        return Iterator(stream.makeAsyncIterator())
    }

    private func produce(scanner: TagScanner, _ yield: @escaping @Sendable (MediaEvent) -> Void) async {
        let interrupt = scanner.fetcher.interrupt
        let throttle = ProblemThrottle(source: input) { event in
            yield(event)
            // Several programs carry tags and none was chosen: nothing will be read, so the
            // stream is not read on (a udp feed would be for ever).
            if case .failure(let failure) = event, case .severalPrograms = failure.kind {
                interrupt.cancel()
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        var scanner = scanner
        // A meter never reads several programs as one: two channels would be credited as one.
        if scanner.programs == .all { scanner.programs = .single }
        switch await InputKind.of(input, fetcher: scanner.fetcher) {
        case .hlsPlaylist:
            // The variant's playlist, or its audio rendition's when that carries the tags; the
            // first segment probed for a frame rate when the variant declares none.
            await PlaylistWalk(input: input, loader: scanner.loader, rule: .carrier, programs: scanner.programs, liveStart: liveStart,
                               resumeAt: resumeAt, probesFrameRate: true, clock: clock).run { throttle($0) }
        case .mpd:
            await DASHWalk(input: input, loader: MPDLoader(fetcher: scanner.fetcher), variant: scanner.variant, programs: scanner.programs,
                           liveStart: liveStart, resumeAt: resumeAt, clock: clock).run { throttle($0) }
        case .media:
            if resumeAt != nil {
                throttle(.warning(InputFailure(source: input, .notResumable)))
            }
            await produceInput(throttle, scanner: scanner)
        }
        throttle.summarise()
    }

    /// Any other input (a file, an HTTP resource, a udp/srt stream): each tag is buffered as it
    /// is read, its own PTS placing it; the source is open once its first bytes are probed.
    private func produceInput(_ yield: ProblemThrottle, scanner: TagScanner) async {
        let interrupt = scanner.fetcher.interrupt
        await scanner.scan(input, as: .media, opened: { prefix in
            // Bytes of no known form are refused by the scan; only MPEG-TS has a video rate worth probing.
            guard let form = MediaForm.sniff(Array(prefix.prefix(MediaForm.sniffLength))) else { return }
            let streams = form == .transportStream ? (try? StreamProbe.streams(in: prefix, interrupt: interrupt)) ?? [] : []
            let videoRate = streams.first { $0.isVideo }?.frameRate?.framesPerSecond
            yield(.opened(SourceInfo(variantFrameRate: nil, videoFrameRate: videoRate, isLive: false)))
        }, emit: { yield($0) }, afterEachChunk: {})
    }
}

extension TagSource where C == ContinuousClock {
    /// A source of `input`'s events in real time (`ContinuousClock`), as a player reads it.
    public init(input: String, scanner: TagScanner = TagScanner(), liveStart: Int = 3, resumeAt: Int? = nil) {
        self.init(input: input, scanner: scanner, liveStart: liveStart, resumeAt: resumeAt, clock: ContinuousClock())
    }
}
