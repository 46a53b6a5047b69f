import Foundation

/// The tags of one input as they become available, as an AsyncSequence: an HLS playlist
/// (live: followed as it slides; VOD: read through) segment by segment, or any other input
/// libavformat opens, packet by packet. Blocking I/O runs on the source's own executor.
public struct TagSource<C: Clock>: AsyncSequence, Sendable where C.Duration == Duration {
    public typealias Element = SourceEvent

    public var input: String
    public var scanner: Scanner
    public var liveStart: Int
    public var clock: C

    public init(input: String, scanner: Scanner = Scanner(), liveStart: Int = 3, clock: C) {
        self.input = input
        self.scanner = scanner
        self.liveStart = liveStart
        self.clock = clock
    }

    public func makeAsyncIterator() -> AsyncStream<SourceEvent>.Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: SourceEvent.self)
        let task = Task { [self] in
            await produce { continuation.yield($0) }
            continuation.finish()
        }
        let interrupt = scanner.fetcher.interrupt
        continuation.onTermination = { _ in
            task.cancel()
            interrupt.cancel()
        }
        return stream.makeAsyncIterator()
    }

    private func produce(_ yield: @escaping @Sendable (SourceEvent) -> Void) async {
        let executor = BlockingExecutor(label: "source")
        if Scanner.isPlaylist(input) {
            await produceHLS(executor: executor, yield)
        } else if Scanner.isPackedAudio(input) {
            await producePackedAudio(executor: executor, yield)
        } else {
            await produceMedia(executor: executor, yield)
        }
    }

    private func produceHLS(executor: BlockingExecutor, _ yield: @escaping @Sendable (SourceEvent) -> Void) async {
        let (input, scanner) = (input, scanner)
        let resolved: (location: String, variant: Variant?, playlist: MediaPlaylist)
        do {
            resolved = try await executor.run { () throws(SegmentLoadError) in try scanner.resolveMediaPlaylist(input) }
        } catch {
            yield(.failure(InputFailure(source: input, reason: error.reason)))
            return
        }
        let loader = SegmentLoader(fetcher: scanner.fetcher)
        let follower = PlaylistFollower(location: resolved.location, scanner: scanner, liveStart: liveStart, clock: clock,
                                        executor: executor) { error in
            yield(.failure(InputFailure(source: input, reason: "playlist reload failed, retrying: \(error.reason)")))
        }
        nonisolated(unsafe) var opened = false
        await follower.follow(startingWith: resolved.playlist) { event in
            switch event {
            case .gap(let sequences):
                yield(.failure(InputFailure(source: input, reason:
                    "segments \(sequences.lowerBound)...\(sequences.upperBound) left the live window before they could be fetched")))
            case .segment(let segment):
                // Probing the video touches decoder code and memory; only when the variant declares no rate.
                let probe = !opened && resolved.variant?.frameRate == nil
                let (events, read) = await executor.run { () -> ([ScanEvent], Scanner.SegmentRead?) in
                    var events: [ScanEvent] = []
                    let read = scanner.readSegment(segment, of: input, loader: loader, probeStreams: probe) { events.append($0) }
                    return (events, read)
                }
                if !opened {
                    opened = true
                    let videoRate = read?.streams.first { $0.isVideo }?.frameRate?.framesPerSecond
                    yield(.opened(SourceInfo(variantFrameRate: resolved.variant?.frameRate, videoFrameRate: videoRate,
                                             isLive: !resolved.playlist.hasEndList)))
                }
                if let read {
                    yield(.chunk(MediaChunk(origin: read.origin, duration: segment.duration, tags: events.compactMap(\.tag))))
                }
                events.compactMap(\.sourceEvent).forEach(yield)
            }
        }
    }

    /// A single packed audio file: read whole, one chunk (its tags carry their own times).
    private func producePackedAudio(executor: BlockingExecutor, _ yield: @escaping @Sendable (SourceEvent) -> Void) async {
        let (input, scanner) = (input, scanner)
        let events = await executor.run { () -> [ScanEvent] in
            var events: [ScanEvent] = []
            scanner.scan(input) { events.append($0) }
            return events
        }
        yield(.opened(SourceInfo(variantFrameRate: nil, videoFrameRate: nil, isLive: false)))
        yield(.chunk(MediaChunk(origin: TagOrigin(source: input), duration: nil, tags: events.compactMap(\.tag))))
        events.compactMap(\.sourceEvent).forEach(yield)
    }

    private func produceMedia(executor: BlockingExecutor, _ yield: @escaping @Sendable (SourceEvent) -> Void) async {
        let (input, fetcher) = (input, scanner.fetcher)
        let media: MediaInput
        do {
            media = try await executor.run { () throws(AVError) in
                try MediaInput(url: input, interrupt: fetcher.interrupt, ioTimeout: fetcher.ioTimeout, probeStreams: true)
            }
        } catch {
            yield(.failure(InputFailure(source: input, reason: "cannot open: \(error)")))
            return
        }
        let videoRate = media.streams.first { $0.isVideo }?.frameRate?.framesPerSecond
        yield(.opened(SourceInfo(variantFrameRate: nil, videoFrameRate: videoRate, isLive: false)))
        let origin = TagOrigin(source: input)
        while !Task.isCancelled {
            let packet: TimedID3Packet?
            do {
                packet = try await executor.run { () throws(AVError) in try media.nextPacket() }
            } catch {
                yield(.failure(InputFailure(source: input, reason: "read error: \(error)")))
                return
            }
            guard let packet else { return }
            let contents = ID3PacketParser.parse(packet.bytes)
            let tags = contents.tags.map { TimedTag(tag: $0, pts: packet.pts, origin: origin) }
            yield(.chunk(MediaChunk(origin: origin, duration: nil, tags: tags)))
            if let error = contents.error { yield(.malformed(error, pts: packet.pts, origin: origin)) }
        }
    }
}

private extension ScanEvent {
    var tag: TimedTag? { if case .tag(let tag) = self { tag } else { nil } }

    /// Everything but tags, which travel inside their chunk.
    var sourceEvent: SourceEvent? {
        switch self {
        case .tag, .segment: nil
        case .malformed(let error, let pts, let origin): .malformed(error, pts: pts, origin: origin)
        case .failure(let failure): .failure(failure)
        }
    }
}
