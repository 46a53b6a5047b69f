/// What a stream of bytes is, told from its first bytes, in one place and in this order: an ID3
/// header means packed audio (whatever 0x47 bytes follow inside the tag); an ISO BMFF box type
/// means fMP4; sync bytes at a 188-byte stride mean MPEG-TS; an audio frame header means packed
/// audio without a leading tag.
public enum MediaForm: Sendable, Equatable {
    case transportStream
    case packedAudio
    case fragmentedMP4

    /// `nil` when the bytes are none of these.
    public static func sniff(_ prefix: [UInt8]) -> MediaForm? {
        if ID3TagParser.hasHeader(prefix, at: 0) { return .packedAudio }
        if FragmentReader.isFragmentedMP4(prefix) { return .fragmentedMP4 }
        if TransportStreamSync.offset(in: prefix) != nil { return .transportStream }
        if AudioFrameHeader.parse(prefix, at: 0) != nil { return .packedAudio }
        return nil
    }

    /// The reader of a form other than MPEG-TS (which goes through `TimedID3Demuxer`).
    var wholeFileForm: WholeFileForm? {
        switch self {
        case .transportStream: nil
        case .packedAudio: .packedAudio
        case .fragmentedMP4: .fragmentedMP4
        }
    }
}
