import FoundationEssentials

/// What a stream of bytes is, told from its first bytes, in one place and in this order: an ID3
/// header means packed audio (whatever 0x47 bytes follow inside the tag); an ISO BMFF box type
/// means fMP4; sync bytes at a 188-byte stride mean MPEG-TS; an audio frame header means packed
/// audio without a leading tag.
public enum MediaForm: Sendable, Equatable, CaseIterable {
    /// MPEG-TS with a timed-ID3 stream (stream_type 0x15), as HLS segments and broadcasts carry it.
    case transportStream
    /// Packed audio (AAC, MP3, AC-3, E-AC-3) with an ID3 tag in front, as HLS audio segments carry it.
    case packedAudio
    /// Fragmented MP4 with ID3 in `emsg` boxes (the AOM, Apple and Nielsen ID3 schemes).
    case fragmentedMP4

    /// Enough bytes to tell every form, with room for junk before the first TS packet.
    public static let sniffLength = 4_096

    /// `nil` when the bytes are none of these.
    public static func sniff(_ prefix: [UInt8]) -> MediaForm? {
        if ID3TagParser.hasHeader(prefix, at: 0) { return .packedAudio }
        if FragmentReader.isFragmentedMP4(prefix) { return .fragmentedMP4 }
        if TransportStreamSync.offset(in: prefix) != nil { return .transportStream }
        if AudioFrameHeader.parse(prefix, at: 0) != nil { return .packedAudio }
        return nil
    }

    /// The form a file name's extension promises, lower case, without the dot.
    public static func promised(byExtension suffix: String) -> MediaForm? {
        allCases.first { $0.extensions.contains(suffix.lowercased()) }
    }

    /// File extensions a folder scan takes as this form.
    public var extensions: [String] {
        switch self {
        case .transportStream: ["ts"]
        case .packedAudio: ["aac", "adts", "mp3", "ac3", "ec3", "eac3"]
        case .fragmentedMP4: ["mp4", "m4s", "m4a", "m4v", "cmfv", "cmfa"]
        }
    }

    /// An extractor for this form; `initSegment` is an fMP4 segment's `EXT-X-MAP`, whose track
    /// timescales time its messages; `programs`, which programs of MPEG-TS are read.
    public func makeExtractor(origin: TagOrigin, initSegment: [UInt8]? = nil, programs: ProgramSelection = .all) -> any TagExtractor {
        switch self {
        case .transportStream: TransportStreamExtractor(origin: origin, programs: programs)
        case .packedAudio: PackedAudioReader(origin: origin)
        case .fragmentedMP4: FragmentReader(timescales: initSegment.flatMap(TrackTimescales.init(initSegment:)), origin: origin)
        }
    }

    /// What a readable input of this form without a tag is told.
    package var noTagReason: String {
        switch self {
        case .transportStream: Self.noTimedID3
        case .packedAudio: "no ID3 tag in this packed audio"
        case .fragmentedMP4: "no emsg box carrying ID3 in this fragmented MP4"
        }
    }

    package static let noTimedID3 = "no timed-ID3 stream (an MPEG-TS PID of stream_type 0x15, or one declared as ID3)"
}
