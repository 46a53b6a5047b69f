import Synchronization

/// An engine in front of another that holds back what a previous run already delivered: in the
/// resumed segment, every tag up to and including the checkpoint's (`pts` and payload), and
/// anything from an earlier segment. A restarted meter replays that segment from its start, as
/// a player does, and this keeps the engine from hearing its first tags twice.
package final class ResumingEngine: MeteringEngine {
    private let engine: any MeteringEngine
    private let point: ResumePoint
    private let passed = Atomic(false)

    public init(_ engine: any MeteringEngine, resumingAfter point: ResumePoint) {
        self.engine = engine
        self.point = point
    }

    /// Lets everything through from now on: the playlist's sequence numbers went back behind
    /// the checkpoint's, so they no longer tell what was delivered.
    public func forgetCheckpoint() {
        passed.store(true, ordering: .relaxed)
    }

    public func sendID3(_ payload: String, context: TagContext) async {
        if !passed.load(ordering: .relaxed), let segment = context.origin.segment {
            let place = (segment.discontinuitySequence, segment.mediaSequence)
            let checkpoint = (point.discontinuitySequence, point.mediaSequence)
            if place < checkpoint { return }
            if place == checkpoint {
                // The checkpoint's own tag is the last one held back.
                if payload == point.payload, context.pts == point.pts { forgetCheckpoint() }
                return
            }
        }
        // A later segment, or the checkpoint's tag was not found in its segment (it changed
        // on the server): from here on everything is new.
        forgetCheckpoint()
        await engine.sendID3(payload, context: context)
    }

    public func play(channelName: String) async { await engine.play(channelName: channelName) }
    public func loadMetadata(_ json: String) async { await engine.loadMetadata(json) }
    public func playheadPosition(_ position: Int64) async { await engine.playheadPosition(position) }
    public func stop() async { await engine.stop() }
    public func end() async { await engine.end() }
}
