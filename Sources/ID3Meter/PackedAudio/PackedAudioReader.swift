/// Reads the ID3 tags of a packed audio segment (HLS spec §3.4: AAC, MP3, AC-3 or E-AC-3 frames
/// without a container). The segment opens with an ID3 tag whose PRIV frame
/// `com.apple.streaming.transportStreamTimestamp` gives the PTS of its first frame; tags further
/// in are timed by the audio before them (samples / sample rate). libavformat 5.1 keeps only the
/// first segment's PRIV frames and gives later tags no time, so this is done here.
enum PackedAudioReader {
    static let timestampOwner = "com.apple.streaming.transportStreamTimestamp"

    /// Whether `bytes` look like packed audio: an ID3 tag, or an audio frame, and no MPEG-TS sync.
    static func isPackedAudio(_ bytes: [UInt8]) -> Bool {
        TransportStreamSync.offset(in: bytes) == nil
            && (ID3TagParser.hasHeader(bytes, at: 0) || AudioFrameHeader.parse(bytes, at: 0) != nil)
    }

    /// The tags in stream order, each with its PTS when the segment's timestamp is known.
    static func read(_ bytes: [UInt8], origin: TagOrigin, emit: (ScanEvent) -> Void) {
        var offset = 0
        var basePTS: Int64?
        var samples: Int64 = 0
        var sampleRate: Int64?
        var skipped = 0
        func pts() -> Int64? {
            guard let basePTS else { return nil }
            guard let sampleRate else { return basePTS }
            return PTS.asCarried(basePTS + samples * PTS.clockRate / sampleRate)
        }
        while offset < bytes.count {
            if ID3TagParser.hasHeader(bytes, at: offset) {
                switch ID3TagParser.parse(bytes, at: offset) {
                case .success(let tag):
                    if basePTS == nil, samples == 0, let stamp = timestamp(in: tag) { basePTS = stamp }
                    emit(.tag(TimedTag(tag: tag, pts: pts(), origin: origin)))
                    offset += tag.byteCount
                case .failure(let error):
                    emit(.malformed(error, pts: pts(), origin: origin))
                    offset += 3
                }
            } else if let frame = AudioFrameHeader.parse(bytes, at: offset), offset + frame.length <= bytes.count {
                samples += Int64(frame.samples)
                sampleRate = sampleRate ?? Int64(frame.sampleRate)
                offset += frame.length
            } else {
                // Lost sync: step on to the next byte that starts a frame or a tag.
                offset += 1
                skipped += 1
            }
        }
        if skipped > 0 {
            emit(.malformed(ID3ParseError(reason: "\(skipped) bytes that are neither audio frames nor ID3 tags skipped", offset: 0),
                            pts: nil, origin: origin))
        }
    }

    /// The 33-bit PTS in the transportStreamTimestamp PRIV frame's 8 bytes.
    static func timestamp(in tag: ID3Tag) -> Int64? {
        guard let data = tag.privFrames.first(where: { $0.owner == timestampOwner })?.data, data.count == 8 else { return nil }
        return PTS.asCarried(data.reduce(Int64(0)) { $0 << 8 | Int64($1) })
    }
}
