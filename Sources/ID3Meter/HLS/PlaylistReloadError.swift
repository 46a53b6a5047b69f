/// A live playlist's reload failed; the follower tries again, so this is the cause of a failure
/// that does not end the source.
public struct PlaylistReloadError: Error, Sendable {
    public var error: SegmentLoadError
}
