/// Why a playlist, or a segment's bytes, key or initialisation section, could not be had.
public enum SegmentLoadError: Error, Sendable, CustomStringConvertible {
    /// What was being had, with its URI where the words name it.
    public enum Resource: Sendable, Equatable {
        case playlist(String)
        case segment
        case initSection(String)
        case key(String)
    }

    /// `ReferenceRule` refused the reference.
    case refused(ReferenceRule.Refusal, Resource)
    /// The fetch failed: its `FetchFailure` says how (HTTP status, connection, limit, ...).
    case fetch(FetchFailure, Resource)
    /// The playlist's text is not a playlist that can be followed.
    case unreadablePlaylist(String, PlaylistError)
    /// A master playlist where a media playlist was due.
    case masterPlaylist(String)
    /// The master playlist has no variant of that choice.
    case noSuchVariant(VariantChoice, count: Int)
    /// An AES-128 key that is not 16 bytes.
    case keySize(String, bytes: Int)
    /// AES-128 decryption found no valid padding: a wrong key or IV, or a clear segment.
    case decryptionFailed

    /// The failed fetch, when that is what it was.
    public var fetchFailure: FetchFailure? {
        if case .fetch(let failure, _) = self { failure } else { nil }
    }

    public var description: String {
        switch self {
        case .refused(let refusal, .key): "AES-128 key \(refusal)"
        case .refused(let refusal, _): "\(refusal)"
        case .fetch(let failure, .playlist(let location)): "cannot fetch playlist \(location): \(failure)"
        case .fetch(let failure, .segment): "cannot fetch: \(failure)"
        case .fetch(let failure, .initSection(let uri)): "cannot fetch its initialisation segment \(uri): \(failure)"
        case .fetch(let failure, .key(let uri)): "cannot fetch its AES-128 key \(uri): \(failure)"
        case .unreadablePlaylist(let location, let error): "playlist \(location): \(error)"
        case .masterPlaylist(let location): "\(location) is a master playlist, not a media playlist"
        case .noSuchVariant(let variant, let count): "master playlist has \(count) variants; cannot pick \(variant)"
        case .keySize(let uri, let bytes): "AES-128 key \(uri) is \(bytes) bytes, expected 16"
        case .decryptionFailed: "AES-128 decryption failed (wrong key or IV, or the segment is not encrypted)"
        }
    }
}
