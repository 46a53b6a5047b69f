import Foundation

/// Reads every ID3 tag from one input, in stream order: MPEG-TS, packed audio or fragmented MP4
/// from a file or over HTTP, MPEG-TS from a stream libavformat opens (udp, srt, rtp, tcp), or an
/// HLS playlist segment by segment (one variant of a master playlist).
public struct Scanner: Sendable {
    /// Which variant of a master playlist is read.
    public var variant: VariantChoice
    public var fetcher: Fetcher
    /// Told the bytes read from each input as the scan goes (the command line's progress line).
    package var progress: ScanProgress?
    /// Threads that may read blocks of one big local MPEG-TS file besides the one scanning it
    /// (`BlockwiseFileScan`); 0 reads every input in one pass.
    package var blockWorkers = 0

    /// This scanner, reading big local MPEG-TS files in blocks on `workers` threads.
    package func readingBlocks(with workers: Int) -> Scanner {
        var scanner = self
        scanner.blockWorkers = workers
        return scanner
    }

    /// Whether `input` will be read in blocks (it is a local MPEG-TS file big enough, and this
    /// scanner reads blocks).
    package func readsInBlocks(_ input: String) -> Bool {
        blockWorkers > 0 && blocks(of: input) != nil
    }

    /// A scanner that reads `variant` of master playlists and fetches through `fetcher`.
    public init(variant: VariantChoice = .lowestBandwidth, fetcher: Fetcher = Fetcher()) {
        self.variant = variant
        self.fetcher = fetcher
    }

    package init(variant: VariantChoice, fetcher: Fetcher, progress: ScanProgress?) {
        self.init(variant: variant, fetcher: fetcher)
        self.progress = progress
    }

    /// Whether `location` names an HLS playlist, by its extension (`.m3u8`, `.m3u`), as players
    /// and FFmpeg's `hls` demuxer tell them apart; a query string is ignored.
    public static func isPlaylist(_ location: String) -> Bool {
        let path = Location.hasScheme(location) ? (URL(string: location)?.path ?? location) : location
        return ["m3u8", "m3u"].contains((path as NSString).pathExtension.lowercased())
    }

    /// Emits the events of `input` in stream order. `opened` gets its first
    /// `StreamProbe.prefixBytes` (for a probe of its streams) before any event, when it is not a playlist.
    public func scan(_ input: String, opened: (([UInt8]) -> Void)? = nil, emit: (MediaEvent) -> Void) async {
        if Self.isPlaylist(input) {
            await scanPlaylist(input, emit: emit)
        } else if Location.transport(of: input) == .stream {
            await scanStream(input, opened: opened, emit: emit)
        } else {
            await scanBytes(input, opened: opened, emit: emit)
        }
    }

    /// A file or an HTTP resource of any form, through the extractor its first bytes call for.
    private func scanBytes(_ input: String, opened: (([UInt8]) -> Void)?, emit: (MediaEvent) -> Void) async {
        var extractor = MediaExtractor(origin: TagOrigin(source: input))
        if blockWorkers > 0, let (boundaries, prefix) = blocks(of: input) {
            opened?(prefix)
            prefix.withUnsafeBufferPointer { extractor.feed($0, emit: emit) }
            progress?.update(input, bytes: Int64(prefix.count))
            var scan = BlockwiseFileScan(input: input, workers: blockWorkers, progress: progress)
            scan.interrupt = fetcher.interrupt
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
            try await fetcher.read(input, as: .input, retrying: false) { chunk in
                bytes += Int64(chunk.count)
                progress?.update(input, bytes: bytes)
                guard held != nil else { return extractor.feed(chunk, emit: emit) }
                held!.append(contentsOf: chunk)
                if held!.count >= StreamProbe.prefixBytes { release() }
            }
        } catch {
            guard bytes > 0 else { return emit(.failure(InputFailure(source: input, reason: "cannot open: \(error)", cause: error))) }
            release()
            extractor.finish(emit: emit)
            return emit(.failure(InputFailure(source: input, reason: "read error after \(bytes) bytes: \(error)", cause: error)))
        }
        release()
        extractor.finish(emit: emit)
    }

    /// A stream only libavformat reads (udp, srt, rtp, tcp): read on an executor of its own, its
    /// events brought back to this task.
    private func scanStream(_ input: String, opened: (([UInt8]) -> Void)?, emit: (MediaEvent) -> Void) async {
        enum Step: Sendable { case opened([UInt8]), event(MediaEvent) }
        let (steps, continuation) = AsyncStream.makeStream(of: Step.self)
        let scanner = self
        let reading = Task {
            await BlockingExecutor(label: "stream").run {
                scanner.readStream(input, opened: { continuation.yield(.opened($0)) }) { continuation.yield(.event($0)) }
                continuation.finish()
            }
        }
        let interrupt = fetcher.interrupt
        await withTaskCancellationHandler {
            for await step in steps {
                switch step {
                case .opened(let prefix): opened?(prefix)
                case .event(let event): emit(event)
                }
            }
        } onCancel: {
            interrupt.cancel()
            reading.cancel()
        }
    }

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

    /// MPEG-TS from a stream libavformat opens, blocking until it ends.
    func readStream(_ input: String, opened: ([UInt8]) -> Void, emit: (MediaEvent) -> Void) {
        let start: (stream: ByteStream, prefix: [UInt8])
        do { start = try TransportStreamReader.open(input, fetcher: fetcher, prefixBytes: StreamProbe.prefixBytes) } catch {
            emit(.failure(error))
            return
        }
        opened(start.prefix)
        var extractor = TransportStreamExtractor(origin: TagOrigin(source: input))
        do {
            try TransportStreamReader.read(start.stream, prefix: start.prefix, into: &extractor,
                                           progress: { progress?.update(input, bytes: $0) }, emit: emit)
        } catch {
            // udp and srt report a silence as long as the timeout as an I/O error.
            let silent = ["udp:", "srt:"].contains { input.hasPrefix($0) } ? " (no data for \(fetcher.ioTimeout) s)" : ""
            emit(.failure(InputFailure(source: input, reason: "read error: \(error)\(silent)", cause: error)))
        }
        // Read, but nothing to meter: a warning (and a failed check in the QA report), not an error.
        if !extractor.hasTimedID3Stream { emit(.warning(InputFailure(source: input, reason: MediaForm.noTimedID3))) }
    }

    /// The chosen variant's segments and, when it has one, its audio rendition's, in turn; a tag
    /// found in both (same PTS, same frames) is reported once.
    private func scanPlaylist(_ input: String, emit: (MediaEvent) -> Void) async {
        let resolved: ResolvedPlaylist
        do {
            resolved = try await resolveMediaPlaylist(input)
        } catch {
            emit(.failure(InputFailure(source: input, reason: error.reason, cause: error)))
            return
        }
        var playlists = [(location: resolved.location, playlist: resolved.playlist)]
        if let audio = resolved.audio?.uri {
            do { playlists.append((audio, try await loadMediaPlaylist(audio, referencedBy: input))) } catch {
                emit(.failure(InputFailure(source: input, reason: "audio rendition: \(error.reason)", cause: error)))
            }
        }
        var seen = Set<String>()
        func emitOnce(_ event: MediaEvent) {
            if playlists.count > 1, case .tag(let timed) = event, !seen.insert("\(timed.pts ?? -1) \(timed.tag.frames)").inserted { return }
            emit(event)
        }
        let readers = playlists.map {
            SegmentReader(source: input, playlist: $0.location, targetDuration: $0.playlist.targetDuration, fetcher: fetcher)
        }
        var lostInARow = playlists.map { _ in 0 }
        let listed = playlists.map(\.playlist.segments.count).reduce(0, +)
        var tried = 0
        var segmentsRead = 0
        var foundTimedID3 = false
        var bytes: Int64 = 0
        for index in 0..<(playlists.map(\.playlist.segments.count).max() ?? 0) {
            for (number, (playlist, reader)) in zip(playlists, readers).enumerated()
            where index < playlist.playlist.segments.count && lostInARow[number] < fetcher.limits.maximumConsecutiveLostSegments {
                defer {
                    tried += 1
                    progress?.update(input, bytes: bytes, segments: (tried, listed))
                }
                guard let read = await reader.read(playlist.playlist.segments[index], emit: emitOnce) else {
                    lostInARow[number] += 1
                    if lostInARow[number] == fetcher.limits.maximumConsecutiveLostSegments {
                        emit(.failure(InputFailure(source: input, reason: "gave up on \(playlist.location) after \(lostInARow[number]) "
                            + "segments in a row could not be read (--max-lost-segments); "
                            + "\(playlist.playlist.segments.count - index - 1) more not tried")))
                    }
                    continue
                }
                lostInARow[number] = 0
                segmentsRead += 1
                bytes += read.byteCount
                if read.hasTimedID3 { foundTimedID3 = true }
            }
        }
        readers.forEach { $0.finish(emit: emitOnce) }
        if segmentsRead > 0, !foundTimedID3 {
            emit(.warning(InputFailure(source: input, reason: "none of its segments has \(MediaForm.noTimedID3.dropFirst(3))")))
        }
    }

    /// The media playlist at `location`; `parent`, the playlist that referenced it, if any, must be allowed to.
    /// `keeping`: which segments are made (a live reload: those from the next one on), the others counted.
    public func loadMediaPlaylist(_ location: String, referencedBy parent: String? = nil, targetDuration: Double? = nil,
                                  keeping window: PlaylistParser.SegmentWindow = .all) async throws(SegmentLoadError) -> MediaPlaylist {
        switch try await loadPlaylist(location, referencedBy: parent, targetDuration: targetDuration, keeping: window) {
        case .media(let media): return media
        case .master: throw SegmentLoadError(reason: "\(location) is a master playlist, not a media playlist")
        }
    }

    /// A media playlist reached from what the user named.
    public struct ResolvedPlaylist: Sendable {
        public var location: String
        /// The variant chosen, when `location` is a master playlist.
        public var variant: Variant?
        public var playlist: MediaPlaylist
        /// The variant's audio rendition with a playlist of its own, which may carry the tags instead.
        public var audio: Rendition?
    }

    /// Loads the playlist at `location` and, when it is a master playlist, the media playlist of
    /// the chosen variant (`variant`) and notes its audio rendition.
    /// `keeping` says which of the media playlist's segments are made.
    public func resolveMediaPlaylist(_ location: String, keeping window: PlaylistParser.SegmentWindow = .all) async throws(SegmentLoadError)
        -> ResolvedPlaylist {
        switch try await loadPlaylist(location, keeping: window) {
        case .media(let media):
            return ResolvedPlaylist(location: location, playlist: media)
        case .master(let master):
            guard let chosen = variant.pick(from: master.variants) else {
                throw SegmentLoadError(reason: "master playlist has \(master.variants.count) variants; cannot pick \(variant)")
            }
            let media = try await loadMediaPlaylist(chosen.uri, referencedBy: location, keeping: window)
            return ResolvedPlaylist(location: chosen.uri, variant: chosen, playlist: media, audio: master.audioRendition(for: chosen))
        }
    }

    /// The playlist at `location`, read once (whoever follows a playlist tries again itself).
    public func loadPlaylist(_ location: String, referencedBy parent: String? = nil, targetDuration: Double? = nil,
                             keeping window: PlaylistParser.SegmentWindow = .all) async throws(SegmentLoadError) -> Playlist {
        if let parent, let refusal = ReferenceRule.refusal(of: location, from: parent) { throw SegmentLoadError(reason: refusal, cause: .refused) }
        let bytes: [UInt8]
        do throws(FetchFailure) { bytes = try await fetcher.fetch(location, as: .playlist, targetDuration: targetDuration, retrying: false) } catch {
            throw SegmentLoadError(reason: "cannot fetch playlist \(location): \(error)", cause: .fetch(error))
        }
        do throws(PlaylistError) {
            return try PlaylistParser.parse(String(decoding: bytes, as: UTF8.self), location: location, keeping: window)
        } catch {
            throw SegmentLoadError(reason: "playlist \(location): \(error)", cause: .playlist(error))
        }
    }
}
