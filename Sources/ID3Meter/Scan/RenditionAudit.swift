import ID3MeterCore

/// A few segments of every rendition of a presentation, read at once from the live edge (a
/// VOD's start) and compared: `serve`'s periodic look at the renditions it does not meter. Each
/// rendition is joined `segments` back from its edge, as a player joins, and read until that
/// many segments are in or `timeLimit` passes; renditions joined a moment apart may differ by a
/// segment at either end, which the comparison does not count (`RenditionComparison`: only
/// the media both read is compared).
package struct RenditionAudit: Sendable {
    package var input: String
    /// Fetches under the channel's headers, limits and connections.
    package var scanner: TagScanner
    package var segments: Int
    package var timeLimit: Duration

    package init(input: String, scanner: TagScanner, segments: Int = 3, timeLimit: Duration = .seconds(60)) {
        self.input = input
        self.scanner = scanner
        self.segments = max(segments, 1)
        self.timeLimit = timeLimit
    }

    /// The renditions compared (the first `RenditionLadder.maximumRenditions`); `nil` when
    /// `input` is not a master playlist or an MPD with more than one rendition (there is nothing
    /// to compare), or cannot be loaded now.
    package func run() async -> RenditionComparison? {
        guard let ladder = await RenditionLadder.of(input, scanner: scanner)?.renditions, ladder.count > 1 else { return nil }
        let read = await withTaskGroup(of: (Int, RenditionTags).self) { group in
            for (index, rendition) in ladder.enumerated() {
                group.addTask { (index, await sample(rendition)) }
            }
            var read: [Int: RenditionTags] = [:]
            for await (index, tags) in group { read[index] = tags }
            return read
        }
        return RenditionComparison(source: input, renditions: ladder.indices.compactMap { read[$0] })
    }

    /// `segments` of `rendition` from its edge, or what of them came within `timeLimit`. One of
    /// which no segment could be read is unreadable.
    private func sample(_ rendition: LadderRendition) async -> RenditionTags {
        let (input, scanner, segments, timeLimit) = (input, scanner, segments, timeLimit)
        return await withTaskGroup(of: RenditionTags?.self) { group in
            group.addTask {
                var tags = rendition.tags
                var read = 0
                await scanner.scan(ScanInput(input, rendition: rendition), reading: .liveEdge(segments: segments), emit: { event in
                    guard read < segments else { return }
                    tags.add(event)
                    guard case .segment(let segment) = event, !segment.isGap, segment.part?.isLast ?? true else { return }
                    read += 1
                    // Enough: the walk, which would follow the playlist, ends at its next look.
                    if read == segments { withUnsafeCurrentTask { $0?.cancel() } }
                }, afterEachChunk: {})
                tags.readable = read > 0
                return tags
            }
            group.addTask {
                try? await MeterClock(timer: scanner.timer).sleep(for: timeLimit)
                return nil
            }
            var sampled = rendition.tags
            for await result in group {
                guard let result else {
                    // Time is up: the read stops and hands in what it has.
                    group.cancelAll()
                    continue
                }
                sampled = result
                group.cancelAll()
            }
            return sampled
        }
    }
}
