/// Reads the ID3 tags of a packed audio segment (HLS spec §3.4: AAC, MP3, AC-3 or E-AC-3 frames
/// without a container). The segment opens with an ID3 tag whose PRIV frame
/// `com.apple.streaming.transportStreamTimestamp` gives the PTS of its first frame; tags further
/// in are timed by the audio before them (samples / sample rate). libavformat 5.1 keeps only the
/// first segment's PRIV frames and gives later tags no time, so this is done here.
struct PackedAudioReader: TagExtractor {
    static let timestampOwner = "com.apple.streaming.transportStreamTimestamp"
    /// A tag declaring more is not waited for: it is reported as malformed and stepped over.
    static let maximumTagBytes = 16 << 20
    /// Enough to tell a tag header or a frame header from anything else.
    private static let lookahead = ID3TagParser.headerLength

    private let origin: TagOrigin
    /// Bytes not yet walked: less than a tag or a frame.
    private var pending: [UInt8] = []
    /// Where `pending` starts in the input.
    private var position = 0
    private var basePTS: Int64?
    private var samples: Int64 = 0
    private var sampleRate: Int64?
    private var skipped = 0

    init(origin: TagOrigin) { self.origin = origin }

    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void) {
        pending.append(contentsOf: bytes)
        walk(isFinal: false, emit: emit)
    }

    mutating func finish(emit: (MediaEvent) -> Void) {
        walk(isFinal: true, emit: emit)
        if skipped > 0 {
            emit(.malformed(ID3ParseError(.strayBytes(skipped), offset: 0),
                            pts: nil, origin: origin))
        }
    }

    private var pts: Int64? {
        guard let basePTS else { return nil }
        guard let sampleRate else { return basePTS }
        return PTS.asCarried(basePTS + samples * PTS.clockRate / sampleRate)
    }

    /// Steps over tags and frames while they are whole; without `isFinal`, stops where more
    /// bytes could change what is read.
    private mutating func walk(isFinal: Bool, emit: (MediaEvent) -> Void) {
        var offset = 0
        defer {
            pending.removeFirst(offset)
            position += offset
        }
        while offset < pending.count {
            if !isFinal, pending.count - offset < Self.lookahead { return }
            if ID3TagParser.hasHeader(pending, at: offset) {
                let size = ID3TagParser.declaredByteCount(pending, at: offset)
                if let size, size > Self.maximumTagBytes {
                    // Not waited for, and told the same way however the bytes came.
                    emit(.malformed(ID3ParseError(.tagTooLarge(declared: size, maximum: Self.maximumTagBytes), offset: position + offset),
                                    pts: pts, origin: origin))
                    offset += 3
                    continue
                }
                if !isFinal, let size, offset + size > pending.count { return }
                switch ID3TagParser.parse(pending, at: offset) {
                case .success(let tag):
                    if basePTS == nil, samples == 0, let stamp = Self.timestamp(in: tag) { basePTS = stamp }
                    emit(.tag(TimedTag(tag: tag, pts: pts, origin: origin, carriage: Carriage(stream: "packed audio"))))
                    offset += tag.byteCount
                case .failure(let error):
                    emit(.malformed(error.shifted(by: position), pts: pts, origin: origin))
                    offset += 3
                }
            } else if let frame = AudioFrameHeader.parse(pending, at: offset), offset + frame.length <= pending.count {
                samples += Int64(frame.samples)
                sampleRate = sampleRate ?? Int64(frame.sampleRate)
                offset += frame.length
            } else if !isFinal, AudioFrameHeader.parse(pending, at: offset) != nil {
                return   // a frame still arriving
            } else {
                // Lost sync: step on to the next byte that starts a frame or a tag.
                offset += 1
                skipped += 1
            }
        }
    }

    /// The 33-bit PTS in the transportStreamTimestamp PRIV frame's 8 bytes.
    static func timestamp(in tag: ID3Tag) -> Int64? {
        guard let data = tag.privFrames.first(where: { $0.owner == timestampOwner })?.data, data.count == 8 else { return nil }
        return PTS.asCarried(data.reduce(Int64(0)) { $0 << 8 | Int64($1) })
    }
}
