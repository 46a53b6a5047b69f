/// Which playlists of the chosen variant are read for tags, when the master playlist gives it
/// an audio rendition with a playlist of its own (packagers put timed ID3 in either, or both).
enum RenditionRule: Sendable {
    /// The variant's and the rendition's, a segment of each in turn, a tag found in both (same
    /// PTS, same frames) once: every tag either carries, as a QA scan wants.
    case both
    /// The variant's, unless its first segment has no timed ID3: then the rendition's. One
    /// playlist to follow and to play out, as a player feeding one engine has.
    case carrier
}
