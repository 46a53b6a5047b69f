import Foundation

/// Reads every ID3 tag from one input, in stream order: MPEG-TS, packed audio or fragmented MP4
/// from a file or over HTTP, MPEG-TS from a stream libavformat opens (udp, srt, rtp, tcp), or an
/// HLS playlist segment by segment (one variant of a master playlist).
public struct TagScanner: Sendable {
    /// Which variant of a master playlist is read.
    public var variant: VariantChoice
    /// Which programs of a multi-program transport stream are read (every one by default).
    public var programs = ProgramSelection.all
    public var fetcher: Fetcher
    /// Told the bytes read from each input as the scan goes (the command line's progress line).
    package var progress: ScanProgress?
    /// Threads that may read blocks of one big local MPEG-TS file besides the one scanning it
    /// (`BlockwiseFileScan`); 0 reads every input in one pass.
    package var blockWorkers = 0
    /// Where a followed playlist's reloads sleep (`Reading.liveEdge`): serve's audits wait in
    /// the shared timer with its channels; `nil`, each on its own.
    package var timer: SharedTimer?

    /// This scanner, reading big local MPEG-TS files in blocks on `workers` threads.
    package func readingBlocks(with workers: Int) -> TagScanner {
        var scanner = self
        scanner.blockWorkers = workers
        return scanner
    }

    /// Whether `input` will be read in blocks (it is a local MPEG-TS file big enough, and this
    /// scanner reads blocks).
    package func readsInBlocks(_ input: String) -> Bool {
        blockWorkers > 0 && blocks(of: input) != nil
    }

    /// A scanner that reads `variant` of master playlists and `programs` of transport streams,
    /// and fetches through `fetcher`.
    public init(variant: VariantChoice = .lowestBandwidth, programs: ProgramSelection = .all, fetcher: Fetcher = Fetcher()) {
        self.variant = variant
        self.programs = programs
        self.fetcher = fetcher
    }

    package init(variant: VariantChoice, fetcher: Fetcher, progress: ScanProgress?) {
        self.init(variant: variant, fetcher: fetcher)
        self.progress = progress
    }

    /// Loads playlists through `fetcher` and picks `variant` of a master playlist.
    var loader: PlaylistLoader { PlaylistLoader(fetcher: fetcher, variant: variant) }

    /// Emits the events of `input` in stream order. `opened` gets its first
    /// `StreamProbe.prefixBytes` (for a probe of its streams) before any event, when it is not a playlist.
    public func scan(_ input: String, opened: (([UInt8]) -> Void)? = nil, emit: (MediaEvent) -> Void) async {
        await scan(input, opened: opened, emit: emit, afterEachChunk: {})
    }

    /// `afterEachChunk` is awaited once a chunk's events are emitted (a playlist's, a segment's):
    /// a consumer that hands events on to another task waits there for room, and the read with it.
    /// `kind`, when the caller has decided it (`InputKind.of`); else it is decided here. Each
    /// input is a player session of its own (its cookies).
    package func scan(_ input: String, as kind: InputKind? = nil, opened: (([UInt8]) -> Void)? = nil, emit: (MediaEvent) -> Void,
                      afterEachChunk: () async -> Void) async {
        await scan(ScanInput(input), as: kind, opened: opened, emit: emit, afterEachChunk: afterEachChunk)
    }

    /// How a playlist or MPD is read.
    package enum Reading: Sendable {
        /// What it lists now, once (a scan of a live one: its window as it stands).
        case asItStands
        /// Joined this many segments from a live one's edge and followed (a VOD from its start),
        /// until the task is cancelled: a sample of what a player plays now.
        case liveEdge(segments: Int)
    }

    /// `input`, or the one rendition of it that it names.
    package func scan(_ input: ScanInput, as kind: InputKind? = nil, reading: Reading = .asItStands, opened: (([UInt8]) -> Void)? = nil,
                      emit: (MediaEvent) -> Void, afterEachChunk: () async -> Void) async {
        var scanner = self
        scanner.fetcher = fetcher.session()
        let location = input.location
        let progress = progress?.entry(input.name)
        var loader = scanner.loader, variant = variant
        switch input.rendition?.pick {
        case .variant(let index)?: loader.variant = .index(index)
        case .audio(let index)?: loader.audioRendition = index
        case .representation(let index)?: variant = .index(index)
        case nil: break
        }
        let (reloads, liveStart) = switch reading {
        case .asItStands: (false, 3)
        case .liveEdge(let segments): (true, segments)
        }
        let decided: InputKind
        if let kind { decided = kind } else { decided = await InputKind.of(location, fetcher: scanner.fetcher) }
        switch decided {
        case .hlsPlaylist:
            // Every tag the variant or its audio rendition carries; a live playlist as it stands.
            await PlaylistWalk(input: location, loader: loader, rule: .both, programs: programs, liveStart: liveStart, reloads: reloads,
                               clock: MeterClock(timer: timer), progress: progress)
                .run(emit: emit, afterEachSegment: afterEachChunk)
        case .mpd:
            // A dynamic MPD as its time-shift buffer holds it now.
            await DASHWalk(input: location, loader: MPDLoader(fetcher: scanner.fetcher), variant: variant, programs: programs,
                           liveStart: liveStart, reloads: reloads, clock: MeterClock(timer: timer), progress: progress)
                .run(emit: emit, afterEachSegment: afterEachChunk)
        case .media where Location.transport(of: location) == .stream:
            await scanner.scanStream(location, opened: opened, emit: emit, afterEachChunk: afterEachChunk)
        case .media:
            await scanner.scanBytes(location, opened: opened, emit: emit, afterEachChunk: afterEachChunk)
        }
    }

    /// A file or an HTTP resource of any form, through the extractor its first bytes call for.
    private func scanBytes(_ input: String, opened: (([UInt8]) -> Void)?, emit: (MediaEvent) -> Void,
                           afterEachChunk: () async -> Void) async {
        var extractor = MediaExtractor(origin: TagOrigin(source: input), programs: programs)
        if blockWorkers > 0, let (boundaries, prefix) = blocks(of: input) {
            opened?(prefix)
            prefix.withUnsafeBufferPointer { extractor.feed($0, emit: emit) }
            progress?.update(input, bytes: Int64(prefix.count))
            var scan = BlockwiseFileScan(input: input, workers: blockWorkers, progress: progress)
            scan.interrupt = fetcher.interrupt
            scan.programs = programs
            await scan.run(boundaries: boundaries, extractor: &extractor, alreadyRead: prefix.count, emit: emit)
            return
        }
        // The first bytes are held until `opened` has them, so that it comes before any event;
        // without an `opened`, nothing is held (a copy of the first megabyte of every file).
        var held: [UInt8]? = opened == nil ? nil : []
        func release() {
            guard let front = held else { return }
            held = nil
            opened?(front)
            extractor.feed(front, emit: emit)
        }
        var bytes: Int64 = 0
        do {
            // One attempt: events already out cannot be taken back by a retry.
            try await fetcher.read(input, as: .input, retrying: false, afterEachChunk: afterEachChunk) { chunk in
                bytes += Int64(chunk.count)
                progress?.update(input, bytes: bytes)
                guard held != nil else { return extractor.feed(chunk, emit: emit) }
                held!.append(contentsOf: chunk)
                if held!.count >= StreamProbe.prefixBytes { release() }
            }
        } catch {
            guard bytes > 0 else { return emit(.failure(InputFailure(source: input, .cannotOpen(error)))) }
            release()
            extractor.finish(emit: emit)
            return emit(.failure(InputFailure(source: input, .readFailed(afterBytes: bytes, error))))
        }
        release()
        extractor.finish(emit: emit)
    }

    /// A stream only libavformat reads (udp, srt, rtp, tcp): opened and read on `BlockingPool`,
    /// a read at a time, each waiting at most `readWait` for bytes, so that a silent stream holds
    /// a thread of the pool no longer than that; its events are made here.
    private func scanStream(_ input: String, opened: (([UInt8]) -> Void)?, emit: (MediaEvent) -> Void,
                            afterEachChunk: () async -> Void) async {
        let (interrupt, ioTimeout) = (fetcher.interrupt, fetcher.ioTimeout.seconds)
        await withTaskCancellationHandler {
            let stream: StreamReading
            do throws(FetchError) {
                stream = try await BlockingPool.run { () throws(FetchError) in
                    StreamReading(try ByteStream(url: input, interrupt: interrupt, ioTimeout: ioTimeout))
                }
            } catch {
                return emit(.failure(InputFailure(source: input, .cannotOpen(error))))
            }
            // The first bytes are held until they show MPEG-TS.
            var prefix: [UInt8] = []
            var extractor: TransportStreamExtractor?
            var bytes: Int64 = 0
            var lastBytes = ContinuousClock.now
            var stop: FetchError?
            reading: while true {
                let read = await BlockingPool.run { () -> Result<[UInt8]?, FetchError> in
                    Result { () throws(FetchError) in try stream.next(waitingAtMost: Self.readWait) }
                }
                switch read {
                case .success(nil):
                    // Bounded: a timeout of any value (NaN, infinity) from a library caller must not trap here.
                    guard (ContinuousClock.now - lastBytes).seconds >= HTTPTransport.bounded(ioTimeout), !interrupt.isCancelled else { continue }
                    stop = .libav(AVError(code: -EIO))
                    break reading
                case .success(let chunk?) where chunk.isEmpty:
                    break reading
                case .success(let chunk?):
                    lastBytes = .now
                    bytes += Int64(chunk.count)
                    progress?.update(input, bytes: bytes)
                    if extractor != nil {
                        extractor!.feed(chunk, emit: emit)
                        await afterEachChunk()
                        continue
                    }
                    prefix += chunk
                    guard prefix.count >= StreamProbe.prefixBytes else { continue }
                    guard let started = start(input, prefix, opened: opened, emit: emit) else { return }
                    extractor = started
                case .failure(let error):
                    stop = error
                    break reading
                }
            }
            if extractor == nil {
                guard !prefix.isEmpty else { return emit(.failure(InputFailure(source: input, stop.map { .cannotOpen($0) } ?? .empty))) }
                extractor = start(input, prefix, opened: opened, emit: emit)
            }
            guard var extractor else { return }
            extractor.finish(emit: emit)
            // udp and srt report a silence as long as the timeout as an I/O error: they have no other end.
            if let stop {
                let silence = ["udp:", "srt:"].contains { input.hasPrefix($0) } ? ioTimeout : nil
                emit(.failure(InputFailure(source: input, .readFailed(afterBytes: nil, stop, silentFor: silence))))
            }
            // Read, but nothing to meter: a warning (and a failed check in the QA report), not an error.
            if !extractor.hasTimedID3Stream { emit(.warning(InputFailure(source: input, .noTimedID3(.transportStream)))) }
        } onCancel: {
            interrupt.cancel()
        }
    }

    /// The extractor fed a stream's first bytes, once they show MPEG-TS; `nil` when they do not.
    private func start(_ input: String, _ prefix: [UInt8], opened: (([UInt8]) -> Void)?,
                       emit: (MediaEvent) -> Void) -> TransportStreamExtractor? {
        guard MediaForm.sniff(prefix) == .transportStream else {
            emit(.failure(InputFailure(source: input, .notTransportStream)))
            return nil
        }
        opened?(prefix)
        var extractor = TransportStreamExtractor(origin: TagOrigin(source: input), programs: programs)
        extractor.feed(prefix, emit: emit)
        return extractor
    }

    /// How long one read of a libavformat stream may wait for bytes before it gives its thread back.
    static let readWait = 0.25

    /// When `input` is a local MPEG-TS file big enough to be read in blocks: where they start,
    /// and its first bytes (what a scan reads before any event).
    private func blocks(of input: String) -> (boundaries: [Int], prefix: [UInt8])? {
        guard let size = LocalFile.regularFileSize(of: input), size >= BlockwiseFileScan.minimumSize,
              size <= fetcher.limits.maximumBytes(for: .input) else { return nil }
        var prefix: [UInt8] = []
        let length = StreamProbe.prefixBytes
        guard (try? LocalFile.read(input, range: ByteRange(offset: 0, length: length), limit: length, resource: .input,
                                   interrupt: fetcher.interrupt, consume: { prefix.append(contentsOf: $0) })) != nil,
              MediaForm.sniff(prefix) == .transportStream, let first = TransportStreamSync.offset(in: prefix) else { return nil }
        return (BlockwiseFileScan.boundaries(size: size, firstPacket: first, read: prefix.count), prefix)
    }
}
