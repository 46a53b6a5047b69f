/// Places media on one continuous playback timeline, in seconds from the first chunk, as a
/// player's buffer does: PTS are unwrapped past the 33-bit wrap, and a discontinuity (or a PTS
/// jump no discontinuity announced) starts a new domain where the previous media ended. So does
/// an interstitial's asset, and the primary after it: each plays where the other stopped.
struct Timeline {
    private var discontinuitySequence: Int?
    private var interstitial: TagOrigin.InterstitialPlace?
    private var anchorTicks: Int64 = 0
    private var anchorPosition = 0.0
    private var latestTicks: Int64?
    /// Where the media placed so far ends.
    private(set) var end = 0.0
    /// Where the chunk placed last starts.
    private(set) var lastStart = 0.0

    /// Places `chunk`: the timeline position of each of its tags.
    mutating func place(_ chunk: MediaChunk) -> [Double] {
        let reference = chunk.segment?.startPTS ?? chunk.tags.lazy.compactMap(\.pts).first
        let discontinuity = chunk.segment?.discontinuitySequence
        guard let reference else {
            lastStart = end
            end += chunk.duration ?? 0
            return chunk.tags.map { _ in end }
        }
        if latestTicks == nil || discontinuity != discontinuitySequence || chunk.segment?.interstitial != interstitial {
            startDomain(at: reference, discontinuity: discontinuity)
            interstitial = chunk.segment?.interstitial
        }
        var referenceTicks = unwrap(reference)
        let start = position(referenceTicks)
        if PTSJump.betweenSegments.isJump(start - end) {
            startDomain(at: reference, discontinuity: discontinuity)
            referenceTicks = unwrap(reference)
        }
        lastStart = position(referenceTicks)
        var latest = referenceTicks
        let positions = chunk.tags.map { tag -> Double in
            guard let pts = tag.pts else { return position(referenceTicks) }
            let ticks = referenceTicks + PTS.distance(from: PTS.asCarried(referenceTicks), to: pts)
            latest = max(latest, ticks)
            return position(ticks)
        }
        latestTicks = latest
        end = max(end, position(referenceTicks) + (chunk.duration ?? 0), positions.max() ?? end)
        return positions
    }

    private mutating func startDomain(at pts: Int64, discontinuity: Int?) {
        discontinuitySequence = discontinuity
        anchorTicks = pts
        anchorPosition = end
        latestTicks = pts
    }

    private func unwrap(_ pts: Int64) -> Int64 {
        let latest = latestTicks ?? pts
        return latest + PTS.distance(from: PTS.asCarried(latest), to: pts)
    }

    private func position(_ ticks: Int64) -> Double {
        anchorPosition + PTS.seconds(ticks - anchorTicks)
    }
}
