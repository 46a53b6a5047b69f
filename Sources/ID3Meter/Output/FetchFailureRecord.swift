import Foundation
import ID3MeterCore

/// The record of a segment the meter gave up on, or of a playlist (or MPD) reload that failed
/// after its retries: what the report counts a channel's lost segments by, and names their
/// fault with (docs/RELIABILITY.md). `segment_failed` and `playlist_failed` records carry the
/// input, the URL without its query (a CDN token is a secret), the media sequence, the reason
/// (`http`, `timeout`, `tls`, `connection`, `unreadable`, `refused`, `other`), the HTTP status
/// and the attempts, as strings (a custom kind's fields), and the failure in words.
extension MeterRecord {
    package static func fetchFailed(_ failure: InputFailure, channel: String?, at date: Date) -> MeterRecord? {
        let (type, sequence, error): (String, Int?, (any Error & Sendable)?)
        switch failure.kind {
        case .segmentSkipped(let mediaSequence, let cause): (type, sequence, error) = ("segment_failed", mediaSequence, cause)
        case .reloadFailed(let cause): (type, sequence, error) = ("playlist_failed", nil, cause)
        default: return nil
        }
        let reason = (error as? SegmentLoadError).map(FetchReason.init) ?? FetchReason(reason: "other", status: nil, attempts: nil)
        var fields = ["source": failure.source, "reason": reason.reason]
        fields["url"] = (failure.segment ?? reason.url).map(Self.withoutQuery)
        fields["media_sequence"] = sequence.map(String.init)
        fields["status"] = reason.status.map(String.init)
        fields["attempts"] = reason.attempts.map(String.init)
        return MeterRecord(sentAt: date.timeIntervalSince1970, channel: channel,
                           .custom(Custom(type: type, message: failure.kind.description, fields: fields)))
    }

    private static func withoutQuery(_ url: String) -> String {
        String(url.prefix { $0 != "?" && $0 != "#" })
    }
}

/// What kind of failure a fetch was, for a record's `reason`.
private struct FetchReason {
    var reason: String
    var status: Int?
    var attempts: Int?
    var url: String?

    init(reason: String, status: Int?, attempts: Int?) {
        (self.reason, self.status, self.attempts) = (reason, status, attempts)
    }

    init(_ error: SegmentLoadError) {
        switch error {
        case .fetch(let fetch, let resource, let attempts):
            self.attempts = attempts
            switch resource {
            case .playlist(let url), .mpd(let url), .initSection(let url), .key(let url), .segmentIndex(let url): self.url = url
            default: break
            }
            switch fetch {
            case .http(let code, _): (reason, status) = ("http", code)
            case .idle, .deadline: reason = "timeout"
            case .tls: reason = "tls"
            case .connection: reason = "connection"
            case .refused, .redirect: reason = "refused"
            default: reason = "other"
            }
        case .refused: reason = "refused"
        case .unreadablePlaylist(let url, _), .unreadableMPD(let url, _):
            reason = "unreadable"
            self.url = url
        default: reason = "other"
        }
    }
}
