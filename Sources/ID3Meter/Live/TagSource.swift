import Foundation

/// The tags of one input as they become available, as an AsyncSequence: an HLS playlist
/// (live: followed as it slides; VOD: read through) segment by segment, or any other input
/// read as its bytes arrive, tag by tag. Waiting on the network holds no thread.
public struct TagSource<C: Clock>: AsyncSequence, Sendable where C.Duration == Duration {
    public typealias Element = MediaEvent

    /// A playlist, file, URL or stream, as `id3-meter` takes it.
    public var input: String
    /// Chooses the variant and fetches, with its limits, retries and headers.
    public var scanner: Scanner
    /// How many segments back from a live playlist's end to start, as players join (3 by default).
    public var liveStart: Int
    /// The media sequence to start at when the playlist still lists it (a checkpoint's).
    public var resumeAt: Int?
    public var clock: C

    /// A source of `input`'s events; `clock` times live playlist reloads and retries.
    public init(input: String, scanner: Scanner = Scanner(), liveStart: Int = 3, resumeAt: Int? = nil, clock: C) {
        self.input = input
        self.scanner = scanner
        self.liveStart = liveStart
        self.resumeAt = resumeAt
        self.clock = clock
    }

    public func makeAsyncIterator() -> AsyncStream<MediaEvent>.Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: MediaEvent.self)
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

    private func produce(_ yield: @escaping @Sendable (MediaEvent) -> Void) async {
        let throttle = ProblemThrottle(source: input, yield: yield)
        if Scanner.isPlaylist(input) {
            await produceHLS(throttle)
        } else {
            if resumeAt != nil {
                throttle(.warning(InputFailure(source: input, reason: "only an HLS playlist can be resumed; read from its start")))
            }
            await produceInput(throttle)
        }
        throttle.summarise()
    }

    private func produceHLS(_ yield: ProblemThrottle) async {
        var resolved: Scanner.ResolvedPlaylist
        do {
            // A live join needs the last few segments (a resume, those from its point on).
            resolved = try await scanner.resolveMediaPlaylist(input, keeping: resumeAt == nil ? .liveEdge(Swift.max(liveStart, 1)) : .all)
        } catch {
            yield(.failure(InputFailure(source: input, reason: error.reason, cause: error)))
            return
        }
        // Tags ride in the audio rendition when the variant's segments have no timed ID3.
        if let audio = resolved.audio?.uri, let first = resolved.playlist.segments.first {
            let reader = SegmentReader(source: input, playlist: resolved.location, targetDuration: resolved.playlist.targetDuration,
                                       fetcher: scanner.fetcher)
            if await reader.read(first, emit: { _ in })?.hasTimedID3 == false {
                do {
                    resolved.playlist = try await scanner.loadMediaPlaylist(audio, referencedBy: input,
                                                                            keeping: resumeAt == nil ? .liveEdge(Swift.max(liveStart, 1)) : .all)
                    resolved.location = audio
                } catch {
                    yield(.failure(InputFailure(source: input, reason: "audio rendition: \(error.reason)", cause: error)))
                }
            }
        }
        let reader = SegmentReader(source: input, playlist: resolved.location, targetDuration: resolved.playlist.targetDuration,
                                   fetcher: scanner.fetcher)
        let lostLimit = scanner.fetcher.limits.maximumConsecutiveLostSegments
        let input = input
        let follower = PlaylistFollower(location: resolved.location, scanner: scanner, liveStart: liveStart, resumeAt: resumeAt,
                                        clock: clock) { error in
            yield(.failure(InputFailure(source: input, reason: "playlist reload failed, retrying: \(error.reason)",
                                         cause: PlaylistReloadError(error: error))))
        }
        var opened = false
        var lostInARow = 0
        await follower.follow(startingWith: resolved.playlist) { event in
            switch event {
            case .resumed(let resumption):
                yield(.resumed(resumption))
            case .gap(let sequences):
                yield(.failure(InputFailure(source: input, reason:
                    "segments \(sequences.lowerBound)...\(sequences.upperBound) left the live window before they could be fetched",
                    cause: SegmentsLost(sequences: sequences))))
            case .sequenceWentBack(let from, let to):
                yield(.warning(InputFailure(source: input, reason:
                    "the media sequence went back from \(from) to \(to) (an encoder or origin restart?): reading on from segment \(to); "
                    + "a tag already delivered is not delivered again")))
            case .renumbered(let from, let to):
                yield(.warning(InputFailure(source: input, reason:
                    "the media sequence jumped from \(from) further than the stream could have gone, or to segments already read: "
                    + "renumbered, nothing taken as lost; reading on from segment \(to)")))
            case .discontinuityWentBack(let from, let to):
                yield(.warning(InputFailure(source: input, reason: "EXT-X-DISCONTINUITY-SEQUENCE went back from \(from) to \(to)")))
            case .segment(let segment):
                // Probing the video touches decoder code and memory; only when the variant declares no rate.
                let probe = !opened && !FrameRateChoice.allowedRates.contains(resolved.variant?.frameRate ?? 0)
                // Held until the read ends: a retried segment's first attempt must not reach the feeder.
                var events: [MediaEvent] = []
                let read = await reader.read(segment, probeStreams: probe) { events.append($0) }
                if !opened {
                    opened = true
                    let videoRate = read?.streams.first { $0.isVideo }?.frameRate?.framesPerSecond
                    yield(.opened(SourceInfo(variantFrameRate: resolved.variant?.frameRate, videoFrameRate: videoRate,
                                             isLive: !resolved.playlist.hasEndList,
                                             targetDuration: resolved.playlist.targetDuration)))
                }
                events.forEach { yield($0) }
                if read == nil { Self.closeFailedSegment(events, yield) }
                lostInARow = read == nil ? lostInARow + 1 : 0
                yield.summarise()
                if lostInARow == lostLimit {
                    // A live stream may come back: keep following, but say so once per run of losses.
                    yield(.failure(InputFailure(source: input, reason:
                        "\(lostInARow) segments in a row could not be read (--max-lost-segments); still following the playlist")))
                }
            }
        }
        reader.finish { yield($0) }
    }

    /// A segment that failed may still have completed a tag the segment before it started: that
    /// tag is buffered now, as part of its own segment, adding no media time.
    private static func closeFailedSegment(_ events: [MediaEvent], _ yield: ProblemThrottle) {
        let completed = events.lazy.compactMap { event in if case .tag(let tag) = event { tag } else { nil } }
        guard var segment = completed.first?.origin.segment else { return }
        segment.duration = nil
        yield(.segment(segment))
    }

    /// Any other input (a file, an HTTP resource, a udp/srt stream): each tag is buffered as it
    /// is read, its own PTS placing it; the source is open once its first bytes are probed.
    private func produceInput(_ yield: ProblemThrottle) async {
        let interrupt = scanner.fetcher.interrupt
        await scanner.scan(input, opened: { prefix in
            // Bytes of no known form are refused by the scan; only MPEG-TS has a video rate worth probing.
            guard let form = MediaForm.sniff(Array(prefix.prefix(MediaForm.sniffLength))) else { return }
            let streams = form == .transportStream ? (try? StreamProbe.streams(in: prefix, interrupt: interrupt)) ?? [] : []
            let videoRate = streams.first { $0.isVideo }?.frameRate?.framesPerSecond
            yield(.opened(SourceInfo(variantFrameRate: nil, videoFrameRate: videoRate, isLive: false)))
        }) { yield($0) }
    }
}
