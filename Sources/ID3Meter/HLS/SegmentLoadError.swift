/// Why a playlist, or a segment's bytes, key or initialisation section, could not be had.
public enum SegmentLoadError: Error, Sendable, CustomStringConvertible {
    /// What was being had, with its URI where the words name it.
    public enum Resource: Sendable, Equatable {
        case playlist(String)
        case segment
        case initSection(String)
        case key(String)
        case steeringManifest(String)
        case mpd(String)
        case segmentIndex(String)
        case assetList(String)
    }

    /// The reference may not be followed from its playlist: a remote playlist may reference
    /// http(s) only, a local one local files too. `scheme` is the scheme refused, `nil` for a
    /// local file named by a remote playlist.
    case refused(reference: String, scheme: String?, Resource)
    /// The fetch failed, after `attempts` tries: the error says how (HTTP status, connection,
    /// limit, ...).
    case fetch(FetchError, Resource, attempts: Int)
    /// The playlist's text is not a playlist that can be followed.
    case unreadablePlaylist(String, PlaylistError)
    /// The MPD's text is not an MPD that can be followed.
    case unreadableMPD(String, MPDError)
    /// The content-steering server's answer cannot be used.
    case unreadableSteeringManifest(String, any Error & Sendable)
    /// An interstitial's `X-ASSET-LIST` is not a list of assets.
    case unreadableAssetList(String, any Error & Sendable)
    /// A master playlist where a media playlist was due.
    case masterPlaylist(String)
    /// A Period of the MPD has no Representation at that position (`--variant N`).
    case noSuchRepresentation(VariantChoice, count: Int)
    /// The master playlist has no variant of that choice.
    case noSuchVariant(VariantChoice, count: Int)
    /// The master playlist has no audio rendition with a playlist at that position.
    case noSuchRendition(Int, count: Int)
    /// An AES-128 key that is not 16 bytes.
    case keySize(String, bytes: Int)
    /// AES-128 decryption found no valid padding: a wrong key or IV, or a clear segment.
    case decryptionFailed
    /// The segment's bytes (`bytes` of them, the first few `begins`) are of no form the meter
    /// reads: an error page served with 200, say. A player's demuxer fails such a segment.
    case unreadableSegment(bytes: Int64, begins: [UInt8])

    /// Bytes came, and they do not parse: the stream is unreadable, not unreachable.
    package var isUnparsable: Bool {
        switch self {
        case .unreadableSegment, .decryptionFailed: true
        default: false
        }
    }

    /// The failed fetch, when that is what it was.
    package var fetchFailure: FetchFailure? {
        if case .fetch(let error, _, let attempts) = self { FetchFailure(error: error, attempts: attempts) } else { nil }
    }

    static func refused(_ refusal: ReferenceRule.Refusal, _ resource: Resource) -> SegmentLoadError {
        .refused(reference: refusal.reference, scheme: refusal.scheme, resource)
    }

    static func fetch(_ failure: FetchFailure, _ resource: Resource) -> SegmentLoadError {
        .fetch(failure.error, resource, attempts: failure.attempts)
    }

    public var description: String {
        switch self {
        case .refused(let reference, let scheme, .key): "AES-128 key \(ReferenceRule.Refusal(reference: reference, scheme: scheme))"
        case .refused(let reference, let scheme, _): "\(ReferenceRule.Refusal(reference: reference, scheme: scheme))"
        case .fetch(let error, let resource, let attempts):
            switch (resource, FetchFailure(error: error, attempts: attempts)) {
            case (.playlist(let location), let failure): "cannot fetch playlist \(location): \(failure)"
            case (.segment, let failure): "cannot fetch: \(failure)"
            case (.initSection(let uri), let failure): "cannot fetch its initialisation segment \(uri): \(failure)"
            case (.key(let uri), let failure): "cannot fetch its AES-128 key \(uri): \(failure)"
            case (.steeringManifest(let uri), let failure): "cannot fetch steering manifest \(uri): \(failure)"
            case (.mpd(let uri), let failure): "cannot fetch MPD \(uri): \(failure)"
            case (.segmentIndex(let uri), let failure): "cannot fetch the segment index (sidx) of \(uri): \(failure)"
            case (.assetList(let uri), let failure): "cannot fetch the asset list \(uri): \(failure)"
            }
        case .unreadablePlaylist(let location, let error): "playlist \(location): \(error)"
        case .unreadableSteeringManifest(let location, let problem): "steering manifest \(location): \(problem)"
        case .unreadableAssetList(let location, let problem): "asset list \(location): \(problem)"
        case .unreadableMPD(let location, let error): "MPD \(location): \(error)"
        case .masterPlaylist(let location): "\(location) is a master playlist, not a media playlist"
        case .noSuchVariant(let variant, let count): "master playlist has \(count) variants; cannot pick \(variant)"
        case .noSuchRendition(let index, let count): "master playlist has \(count) audio renditions with a playlist; cannot pick \(index)"
        case .noSuchRepresentation(let variant, let count): "a Period of the MPD has \(count) Representations; cannot pick \(variant)"
        case .keySize(let uri, let bytes): "AES-128 key \(uri) is \(bytes) bytes, expected 16"
        case .decryptionFailed: "AES-128 decryption failed (wrong key or IV, or the segment is not encrypted)"
        case .unreadableSegment(0, _): "the segment is empty"
        case .unreadableSegment(let bytes, let begins):
            "its \(bytes) bytes are of no form id3-meter reads (MPEG-TS, packed audio, fMP4); they begin \"\(Self.visible(begins))\""
        }
    }

    /// Bytes as words can show them: printable ASCII as it is, anything else as `\xNN`.
    private static func visible(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            (0x20...0x7E).contains(byte) && byte != 0x22 && byte != 0x5C
                ? String(UnicodeScalar(byte)) : "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }.joined()
    }
}
