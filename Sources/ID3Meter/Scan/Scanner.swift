import Foundation

/// Reads every ID3 tag from one input, in stream order: a TS file or URL straight through
/// libavformat, or an HLS playlist segment by segment (one variant of a master playlist).
public struct Scanner: Sendable {
    public var variant: VariantChoice
    public var fetcher: Fetcher
    /// Told the bytes read from each input as the scan goes.
    public var progress: ScanProgress?
    /// Threads one large local MPEG-TS file may be demuxed with, in byte ranges.
    public var filePartitions: Int
    /// Files smaller than this are read in one piece.
    public var partitionThreshold: Int64 = 64 << 20

    public init(variant: VariantChoice = .lowestBandwidth, fetcher: Fetcher = Fetcher(), progress: ScanProgress? = nil,
                filePartitions: Int = 1) {
        self.variant = variant
        self.fetcher = fetcher
        self.progress = progress
        self.filePartitions = filePartitions
    }

    public static func isPlaylist(_ location: String) -> Bool {
        let path = Location.hasScheme(location) ? (URL(string: location)?.path ?? location) : location
        return ["m3u8", "m3u"].contains((path as NSString).pathExtension.lowercased())
    }

    public func scan(_ input: String, emit: (ScanEvent) -> Void) {
        if Self.isPlaylist(input) {
            scanPlaylist(input, emit: emit)
        } else if let parts = partitions(of: input) {
            scanInParts(input, parts: parts, emit: emit)
        } else if Self.isPackedAudio(input) {
            scanPackedAudio(input, emit: emit)
        } else {
            let origin = TagOrigin(source: input)
            do {
                let media = try MediaInput(url: input, interrupt: fetcher.interrupt, ioTimeout: fetcher.ioTimeout)
                readPackets(of: media, origin: origin, emit: emit)
                if !media.streams.contains(where: \.isTimedID3) {
                    emit(.failure(InputFailure(source: input, reason: Self.noTimedID3)))
                }
            } catch {
                emit(.failure(InputFailure(source: input, reason: "cannot open: \(error)")))
            }
        }
    }

    private func scanPlaylist(_ input: String, emit: (ScanEvent) -> Void) {
        let media: MediaPlaylist
        do {
            media = try loadMediaPlaylist(input)
        } catch {
            emit(.failure(InputFailure(source: input, reason: error.reason)))
            return
        }
        let loader = SegmentLoader(fetcher: fetcher)
        var segmentsRead = 0
        var foundTimedID3 = false
        var bytes: Int64 = 0
        for segment in media.segments {
            guard let read = readSegment(segment, of: input, loader: loader, emit: emit) else { continue }
            segmentsRead += 1
            bytes += read.byteCount
            progress?.update(input, bytes: bytes)
            if read.hasTimedID3 { foundTimedID3 = true }
        }
        if segmentsRead > 0, !foundTimedID3 {
            emit(.failure(InputFailure(source: input, reason: "none of its segments has \(Self.noTimedID3.dropFirst(3))")))
        }
    }

    /// What reading a segment found besides its tags.
    public struct SegmentRead: Sendable {
        public var origin: TagOrigin
        /// With frame rates when probed.
        public var streams: [MediaInput.Stream]
        /// A timed-ID3 stream in MPEG-TS, or any ID3 tag in packed audio.
        public var hasTimedID3: Bool
        public var byteCount: Int64
    }

    /// Emits the tags of one segment of `input`; `nil` when it could not be read (and a failure was emitted).
    /// A single packed audio file or URL (.aac, .mp3, .ac3, .ec3), or a local file that starts like one.
    public static func isPackedAudio(_ location: String) -> Bool {
        let path = Location.hasScheme(location) ? (URL(string: location)?.path ?? location) : location
        if ["aac", "mp3", "ac3", "ec3", "eac3"].contains((path as NSString).pathExtension.lowercased()) { return true }
        guard !Location.hasScheme(location), let handle = FileHandle(forReadingAtPath: location) else { return false }
        defer { try? handle.close() }
        return PackedAudioReader.isPackedAudio([UInt8]((try? handle.read(upToCount: 1_024)) ?? Data()))
    }

    /// The events of packed audio bytes, for callers outside the module (the fuzz harness).
    public static func readPackedAudio(_ bytes: [UInt8], emit: (ScanEvent) -> Void) {
        PackedAudioReader.read(bytes, origin: TagOrigin(source: "bytes"), emit: emit)
    }

    private func scanPackedAudio(_ input: String, emit: (ScanEvent) -> Void) {
        let bytes: [UInt8]
        do { bytes = try fetcher.fetchRetrying(input) } catch {
            emit(.failure(InputFailure(source: input, reason: "cannot open: \(error)")))
            return
        }
        var found = false
        PackedAudioReader.read(bytes, origin: TagOrigin(source: input)) { event in
            if case .tag = event { found = true }
            emit(event)
        }
        progress?.update(input, bytes: Int64(bytes.count))
        if !found { emit(.failure(InputFailure(source: input, reason: "no ID3 tag in this packed audio"))) }
    }

    public func readSegment(_ segment: Segment, of input: String, loader: SegmentLoader, probeStreams: Bool = false,
                            emit: (ScanEvent) -> Void) -> SegmentRead? {
        var origin = TagOrigin(source: input, segment: SegmentOrigin(
            uri: segment.uri, mediaSequence: segment.mediaSequence,
            discontinuitySequence: segment.discontinuitySequence, programDateTime: segment.programDateTime))
        do {
            let bytes = try loader.load(segment)
            if PackedAudioReader.isPackedAudio(bytes) {
                var found = false
                PackedAudioReader.read(bytes, origin: origin) { event in
                    if case .tag = event { found = true }
                    emit(event)
                }
                if let segment = origin.segment { emit(.segment(segment)) }
                return SegmentRead(origin: origin, streams: [], hasTimedID3: found, byteCount: Int64(bytes.count))
            }
            origin.segment?.startPTS = SegmentStartPTS.find(in: bytes)
            let format = TransportStreamSync.offset(in: bytes) == 0 ? "mpegts" : nil
            let demuxer = try MediaInput(bytes: bytes, format: format, interrupt: fetcher.interrupt, probeStreams: probeStreams)
            readPackets(of: demuxer, origin: origin, emit: emit)
            if let segment = origin.segment { emit(.segment(segment)) }
            return SegmentRead(origin: origin, streams: demuxer.streams, hasTimedID3: demuxer.streams.contains(where: \.isTimedID3),
                               byteCount: Int64(bytes.count))
        } catch let error as SegmentLoadError {
            emit(.failure(InputFailure(source: input, segment: segment.uri,
                                       reason: "media sequence \(segment.mediaSequence) skipped: \(error.reason)")))
        } catch {
            emit(.failure(InputFailure(source: input, segment: segment.uri,
                                       reason: "media sequence \(segment.mediaSequence) skipped: cannot demux: \(error)")))
        }
        return nil
    }

    static let noTimedID3 = "no timed-ID3 stream (MPEG-TS stream_type 0x15 with an ID3 metadata descriptor)"

    /// The media playlist behind `location`, going through a master playlist when it is one.
    public func loadMediaPlaylist(_ location: String) throws(SegmentLoadError) -> MediaPlaylist {
        try resolveMediaPlaylist(location).playlist
    }

    /// The media playlist behind `location`, its own location, and the variant chosen when
    /// `location` is a master playlist.
    public func resolveMediaPlaylist(_ location: String) throws(SegmentLoadError)
        -> (location: String, variant: Variant?, playlist: MediaPlaylist) {
        switch try loadPlaylist(location) {
        case .media(let media):
            return (location, nil, media)
        case .master(let master):
            guard let chosen = variant.pick(from: master.variants) else {
                throw SegmentLoadError(reason: "master playlist has \(master.variants.count) variants; cannot pick \(variant)")
            }
            switch try loadPlaylist(chosen.uri) {
            case .media(let media): return (chosen.uri, chosen, media)
            case .master: throw SegmentLoadError(reason: "variant \(chosen.uri) is a master playlist, not a media playlist")
            }
        }
    }

    public func loadPlaylist(_ location: String) throws(SegmentLoadError) -> Playlist {
        let bytes: [UInt8]
        do { bytes = try fetcher.fetch(location) } catch {
            throw SegmentLoadError(reason: "cannot fetch playlist \(location): \(error)")
        }
        do {
            return try PlaylistParser.parse(String(decoding: bytes, as: UTF8.self), location: location)
        } catch {
            throw SegmentLoadError(reason: "playlist \(location): \(error)")
        }
    }

    /// Emits the tags of every timed-ID3 packet that `keep` accepts. `part` and `prefixBytes`
    /// place a byte range of a file read in parts, for the progress.
    func readPackets(of media: MediaInput, origin: TagOrigin, part: Int = 0, prefixBytes: Int64 = 0,
                     keep: (TimedID3Packet) -> Bool = { _ in true }, emit: (ScanEvent) -> Void) {
        func reportProgress() {
            if origin.segment == nil { progress?.update(origin.source, part: part, bytes: max(0, media.position - prefixBytes)) }
        }
        do {
            while let packet = try media.nextPacket() {
                reportProgress()
                guard keep(packet) else { continue }
                let contents = ID3PacketParser.parse(packet.bytes)
                for tag in contents.tags { emit(.tag(TimedTag(tag: tag, pts: packet.pts, origin: origin))) }
                if let error = contents.error { emit(.malformed(error, pts: packet.pts, origin: origin)) }
            }
        } catch {
            let failure = InputFailure(source: origin.source, segment: origin.segment?.uri, reason: "read error: \(error)")
            emit(.failure(failure))
        }
        reportProgress()
    }
}
