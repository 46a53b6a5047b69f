/// A Nielsen tag's identity (`tag_id`): the same for the same tag of a channel in every meter,
/// whichever CDN copy, variant, rendition or redundant stream it was read from and whenever the
/// meter joined; different for different tags. It rests on the payload alone, the crediting
/// unit Nielsen's SDK is given: every copy of a tag carries the same payload, and two tags never
/// do (each carries its CIDs, its offsets and an encrypted block of its own). So:
/// - a packager's repeat of a tag (an `emsg` in each segment its event spans, a tag written again
///   after a splice) is the same tag;
/// - a stream that restarts its PTS, or a backup encoder on another PTS base, does not change
///   it: no time is part of it;
/// - a recording played again (a looped VOD) replays the same tags, the same ids: a collector that
///   keeps one record per `(channel, tag_id)` credits them once.
/// docs/COLLECTOR.md states the rule for backends.
public enum TagIdentity {
    /// The first 128 bits of the SHA-256 of the payload's UTF-8 bytes, as 32 lower-case hex digits.
    public static func of(payload: some StringProtocol) -> String { of(utf8: payload.utf8) }

    /// The identity of the payload whose UTF-8 bytes these are.
    public static func of(utf8 payload: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in SHA256.digest(payload).prefix(16) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
