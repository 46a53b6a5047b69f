import ID3MeterCore

/// Which Representation of a Period is read for its tags: the one `variant` picks among those
/// that declare an ID3 event stream (`InbandEventStream`, audio usually); when none does, one
/// of each AdaptationSet, audio first, the first whose segments carry tags being kept (as an
/// HLS variant gives way to its audio rendition). `--variant N` counts every Representation in
/// the MPD's order.
struct MPDChoice: Sendable {
    var variant: VariantChoice

    func candidates(in period: Period) -> [Representation] {
        let all = period.adaptationSets.flatMap(\.representations)
        if case .index(let index) = variant { return index < all.count ? [all[index]] : [] }
        let declaring = all.filter(\.declaresID3)
        if !declaring.isEmpty { return pick(declaring).map { [$0] } ?? [] }
        let rank = ["audio": 0, "video": 1]
        return period.adaptationSets
            .sorted { rank[$0.contentType ?? "", default: 2] < rank[$1.contentType ?? "", default: 2] }
            .compactMap { pick($0.representations) }
    }

    private func pick(_ representations: [Representation]) -> Representation? {
        switch variant {
        case .highestBandwidth: representations.max { $0.bandwidth < $1.bandwidth }
        default: representations.min { $0.bandwidth < $1.bandwidth }
        }
    }

    /// The frame rate the Period's video declares (its first video Representation's): the frame clock's.
    static func frameRate(in period: Period) -> Double? {
        period.adaptationSets.flatMap(\.representations).first { $0.isVideo && $0.frameRate != nil }?.frameRate
    }

    /// The timescale and presentation time offset of a Representation's segments.
    static func timing(_ representation: Representation) -> SegmentTiming? {
        switch representation.addressing {
        case .template(let template): template.timing
        case .list(let list): list.timing
        case .base(let base): base.timing
        case nil: nil
        }
    }
}
