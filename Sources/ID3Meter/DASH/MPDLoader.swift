import Foundation
import ID3MeterCore

/// Loads MPDs and what they point at under `ReferenceRule`, with a playlist's limits: the MPD
/// itself, its remote Periods (`RemotePeriods.swift`), a `SegmentBase`'s segment index, and the
/// server's clock (`UTCTiming`).
struct MPDLoader: Sendable {
    var fetcher: Fetcher

    /// The MPD at `location`, read once (a live walk tries again itself); `parent` (the MPD that
    /// named it in a `Location`) must be allowed to reference it.
    func load(_ location: String, referencedBy parent: String? = nil) async throws(SegmentLoadError) -> MPD {
        var unchanged: Refresh?
        return try await load(location, referencedBy: parent, unlessSameAs: &unchanged)
    }

    /// The last MPD fetched and what reading it gave.
    struct Refresh {
        var bytes: [UInt8]
        /// Where they came from, after redirects.
        var base: String
        var result: Result<MPD, SegmentLoadError>
        /// Its remote Periods as they were resolved.
        var remote: [String: [MPDDocument.Element]] = [:]
    }

    /// `load`, reading the MPD again only when its bytes changed since `last` (which it then
    /// holds): an unchanged MPD, or a broken one served again, costs a compare, not a parse.
    func load(_ location: String, referencedBy parent: String? = nil, unlessSameAs last: inout Refresh?) async throws(SegmentLoadError) -> MPD {
        if let parent, let refusal = ReferenceRule.refusal(of: location, from: parent) { throw .refused(refusal, .mpd(location)) }
        let bytes: [UInt8], base: String
        do throws(FetchFailure) { (bytes, base) = try await fetcher.fetchDocument(location, as: .playlist, retrying: false) } catch {
            throw .fetch(error, .mpd(location))
        }
        if let last, last.bytes == bytes, last.base == base { return try last.result.get() }
        let result: Result<MPD, SegmentLoadError>
        var remote: [String: [MPDDocument.Element]] = [:]
        // Its relative URLs are of where it came from after redirects (shaka-player: "uses
        // redirect URL for manifest BaseURL"); it is refreshed from `location`.
        do throws(MPDError) {
            let resolved = await resolvingRemotePeriods(of: try MPDDocument.parse(bytes), location: base, known: last?.remote ?? [:])
            var mpd = try MPDParser.parse(resolved.document, location: base)
            mpd.remoteFailures = resolved.failures
            mpd.answeredFrom = base
            remote = resolved.resolved
            result = .success(mpd)
        } catch {
            result = .failure(.unreadableMPD(location, error))
        }
        last = Refresh(bytes: bytes, base: base, result: result, remote: remote)
        return try result.get()
    }

    /// The subsegments of a `SegmentBase` resource, from its `sidx` at `range` (`nil`: the first
    /// among the boxes its first `SegmentIndex.searchLength` bytes begin).
    /// A hierarchical index (references to further `sidx` boxes) is followed two levels down, its
    /// references in place of the one that named them, at most `maximumIndexFetches` fetches.
    func segmentIndex(of uri: String, at range: ByteRange?, from mpd: String) async throws(SegmentLoadError) -> SegmentIndex.Index? {
        if let refusal = ReferenceRule.refusal(of: uri, from: mpd) { throw .refused(refusal, .segmentIndex(uri)) }
        var fetches = 0
        func index(at range: ByteRange, depth: Int) async throws(SegmentLoadError) -> SegmentIndex.Index? {
            fetches += 1
            guard fetches <= Self.maximumIndexFetches, depth <= 2 else { return nil }
            let bytes: [UInt8]
            do throws(FetchFailure) { bytes = try await fetcher.fetch(uri, range: range, as: .initSection) } catch {
                throw .fetch(error, .segmentIndex(uri))
            }
            guard var found = SegmentIndex.parse(bytes, offset: range.offset) else { return nil }
            var references: [SegmentIndex.Reference] = []
            for reference in found.references {
                guard reference.isIndex else {
                    references.append(reference)
                    continue
                }
                guard let inner = try await index(at: reference.range, depth: depth + 1), inner.timescale == found.timescale,
                      references.count + inner.references.count <= SegmentIndex.maximumReferences else { return nil }
                references += inner.references
            }
            found.references = references
            return found
        }
        if let range { return try await index(at: range, depth: 0) }
        let prefix: [UInt8]
        do throws(FetchFailure) { prefix = try await fetcher.peek(uri, length: SegmentIndex.searchLength).prefix } catch {
            throw .fetch(error, .segmentIndex(uri))
        }
        fetches += 1
        guard let found = SegmentIndex.locate(in: prefix) else { return nil }
        return try await index(at: found, depth: 0)
    }

    /// The most `sidx` boxes read for one resource's index.
    static let maximumIndexFetches = 64

    /// How far the server's clock is ahead of this machine's, by the first `UTCTiming` that
    /// answers; `nil` with the reason when none does (or none is given).
    func serverClockOffset(_ timings: [UTCTiming], mpd: String, now: @Sendable () -> Date) async -> Result<Double, ClockProblem> {
        var reasons: [String] = []
        for timing in timings {
            switch timing.method {
            case .direct(let date):
                return .success(date.timeIntervalSince(now()))
            case .httpDate(let url), .httpHead(let url):
                let location = Location.resolve(url, against: mpd)
                if let refusal = ReferenceRule.refusal(of: location, from: mpd) {
                    reasons.append("\(refusal)")
                    continue
                }
                do throws(FetchFailure) {
                    let date: Date
                    if case .httpHead = timing.method {
                        // `Date` is cut to the second, so the server's clock was up to a second past
                        // it: taken as it is, the clock may lag, and segments are asked a little
                        // late, never before they exist.
                        guard let head = try await fetcher.serverDate(location) else {
                            reasons.append("\(location) answered without a Date header in HTTP's form")
                            continue
                        }
                        date = head
                    } else {
                        let bytes = try await fetcher.fetch(location, as: .playlist, retrying: false)
                        let text = String(decoding: bytes.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                        guard let body = ProgramDateTime.parse(Substring(text)) else {
                            reasons.append("\(location) answered '\(text.prefix(40))', not an ISO 8601 time")
                            continue
                        }
                        date = body
                    }
                    // The time is taken as of the answer's arrival, as Media3 takes it: the clock
                    // may lag by the answer's way back, never lead. Halfway through the round trip
                    // was ahead whenever the way there was the slower (seen: 10 ms, on a loaded
                    // machine), and a segment asked for at the edge of its availability 404'd.
                    return .success(date.timeIntervalSince(now()))
                } catch {
                    reasons.append("\(location): \(error)")
                }
            case .unsupported:
                reasons.append("UTCTiming \(timing.scheme) is not one id3-meter reads")
            }
        }
        return .failure(ClockProblem(reason: reasons.isEmpty ? "the MPD has no UTCTiming" : reasons.joined(separator: "; ")))
    }

    struct ClockProblem: Error {
        var reason: String
    }
}
