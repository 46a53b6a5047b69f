/// What the QA report remembers of one tag stream between its tags: the spacing of its DATA
/// tags, how long it has gone without an INFO tag, a run of placeholder CIDs, the last PC offset.
/// Times are PTS, comparable only within a discontinuity sequence and without a jump
/// (`TagSpacing`); across one, a stream's measured length starts a new piece.
struct TagStreamState {
    /// The spacing of DATA tags.
    var spacing = TagSpacing()
    var seenPayloads = SeenPayloads()
    /// The missing metadata descriptor was reported (once a stream).
    var reportedUndeclared = false
    /// Seconds of the stream measured so far: the comparable steps between its tags, summed.
    private(set) var span = 0.0
    /// The same between its DATA tags with a time of their own: how much of the media they
    /// cover, first to last.
    private(set) var dataSpan = 0.0
    private var dataTimes = TagSpacing()
    private(set) var lastTime: (pts: Int64, sequence: Int?)?
    private var allTags = TagSpacing()
    /// `span` when the last INFO tag came (0 before the first).
    private var spanAtInfo = 0.0
    private var sawInfo = false
    private var run: (start: Int64, last: Int64, sequence: Int?)?
    /// The last PC and FD offsets read, each with its CID and PTS.
    private var lastOffsets: [(cid: String, offset: Int, pts: Int64, sequence: Int?)?] = [nil, nil]

    struct PlaceholderRun {
        var start: Int64
        var seconds: Double
    }

    /// A tag of the stream at `pts`: its length grows by the comparable step.
    mutating func noteTime(_ pts: Int64?, sequence: Int?) {
        guard let pts else { return }
        if case .gap(let seconds) = allTags.step(pts: pts, discontinuitySequence: sequence), seconds > 0 { span += seconds }
        lastTime = (pts, sequence)
    }

    /// A DATA tag at `pts` (`nil`: a time not its own, which neither ends nor starts a step).
    mutating func noteDataTime(_ pts: Int64?, sequence: Int?) {
        if case .gap(let seconds) = dataTimes.step(pts: pts, discontinuitySequence: sequence), seconds > 0 { dataSpan += seconds }
    }

    /// An INFO tag: the seconds since the INFO tag before (`nil` for the first), and the
    /// seconds since that one or the stream's start when more than `SourceReport.infoInterval`.
    mutating func info(at pts: Int64?, sequence: Int?) -> (interval: Double?, late: Double?) {
        defer { spanAtInfo = span; sawInfo = true }
        let since = span - spanAtInfo
        return (sawInfo ? since : nil, since > SourceReport.infoInterval ? since : nil)
    }

    /// The seconds since the last INFO tag at the stream's end, when too many.
    func trailingInfoGap() -> Double? { span - spanAtInfo > SourceReport.infoInterval ? span - spanAtInfo : nil }

    /// A DATA tag, placeholder or not: a run of placeholders that ends here, when longer than
    /// `SourceReport.placeholderRun`, measured to this tag.
    mutating func placeholder(_ isPlaceholder: Bool, at pts: Int64?, sequence: Int?) -> PlaceholderRun? {
        guard let pts else { return nil }
        if let open = run, open.sequence != sequence {
            run = nil
            if let ended = Self.ended(open, at: open.last) { return ended }
        }
        if isPlaceholder {
            if run == nil { run = (pts, pts, sequence) } else { run!.last = pts }
            return nil
        }
        defer { run = nil }
        return run.flatMap { Self.ended($0, at: pts) }
    }

    /// A run still open at the end of the stream, measured to its last placeholder.
    mutating func endPlaceholderRun() -> PlaceholderRun? {
        defer { run = nil }
        return run.flatMap { Self.ended($0, at: $0.last) }
    }

    private static func ended(_ run: (start: Int64, last: Int64, sequence: Int?), at end: Int64) -> PlaceholderRun? {
        let seconds = PTS.seconds(PTS.distance(from: run.start, to: end))
        return seconds > SourceReport.placeholderRun ? PlaceholderRun(start: run.start, seconds: seconds) : nil
    }

    /// A valid DATA tag: for its PC and its FD CID (each when not null), how far that offset
    /// and the PTS moved since the tag before with the same CID, where they disagree by more
    /// than `SourceReport.offsetDrift` (offsets count seconds of a broadcast day, so they wrap
    /// at 86,400).
    mutating func offsetDrifts(of tag: NielsenTag, at pts: Int64?, sequence: Int?) -> [(field: String, offset: Double, pts: Double)] {
        guard let pts, tag.isValid else { return [] }
        var drifts: [(field: String, offset: Double, pts: Double)] = []
        for (index, field, cid, text) in [(0, "PC", tag.pcCID, tag.pcOffset), (1, "FD", tag.fdCID, tag.fdOffset)] {
            guard let cid, cid != NielsenTag.placeholderCID, let offset = text.flatMap({ Int($0) }) else { continue }
            defer { lastOffsets[index] = (cid, offset, pts, sequence) }
            guard let last = lastOffsets[index], last.cid == cid, last.sequence == sequence else { continue }
            let seconds = PTS.seconds(PTS.distance(from: last.pts, to: pts))
            guard !PTSJump.betweenTags.isJump(seconds) else { continue }
            var moved = Double((offset - last.offset) % 86_400)
            if moved > 43_200 { moved -= 86_400 } else if moved <= -43_200 { moved += 86_400 }
            if abs(moved - seconds) > SourceReport.offsetDrift { drifts.append((field, moved, seconds)) }
        }
        return drifts
    }
}
