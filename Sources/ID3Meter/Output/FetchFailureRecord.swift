import Foundation
import ID3MeterCore

/// The record of a segment the meter gave up on, or of a playlist (or MPD) reload that failed
/// after its retries (`MeterRecord.FetchFailure`), from the failure the walk emitted.
extension MeterRecord {
    package static func fetchFailed(_ failure: InputFailure, channel: String?, at date: Date) -> MeterRecord? {
        let (resource, sequence, error): (FetchFailure.Resource, Int?, (any Error & Sendable)?)
        switch failure.kind {
        case .segmentSkipped(let mediaSequence, let cause): (resource, sequence, error) = (.segment, mediaSequence, cause)
        case .reloadFailed(let cause): (resource, sequence, error) = (.playlist, nil, cause)
        default: return nil
        }
        // A fetch cut short by the meter's own stop is no fault of the stream's.
        if case .fetch(let fetch, _, _) = error as? SegmentLoadError, fetch.isCancelled { return nil }
        let why = (error as? SegmentLoadError).map(FetchReason.init) ?? FetchReason()
        let url = (failure.segment ?? why.url).map { String($0.prefix { $0 != "?" && $0 != "#" }) }
        return MeterRecord(sentAt: date.timeIntervalSince1970, channel: channel, .fetchFailure(FetchFailure(
            resource: resource, source: failure.source, url: url, mediaSequence: sequence, reason: why.reason, status: why.status,
            attempts: why.attempts, message: failure.kind.description)))
    }
}

/// What kind of failure a fetch was, for a record's `reason`.
private struct FetchReason {
    var reason = "other"
    var status: Int?
    var attempts: Int?
    var url: String?

    init() {}

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
            default: break
            }
        case .refused: reason = "refused"
        case .unreadablePlaylist(let url, _), .unreadableMPD(let url, _):
            reason = "unreadable"
            self.url = url
        case .unreadableSegment, .decryptionFailed: reason = "unreadable"
        default: break
        }
    }
}
