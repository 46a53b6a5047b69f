/// When a channel was first and last heard of (any record of it), and when its line-up deleted
/// it (`serve`'s `config_change`), if nothing was heard of it since: the report counts a
/// channel on air from its first record until it is deleted, or to the report's end. A channel
/// whose meters all stopped is still on air: the silence is a gap, not an absence.
package struct ChannelSpan: Sendable, Equatable {
    package var channel: String
    package var firstAt: Double
    package var lastAt: Double
    package var deletedAt: Double?

    package init(channel: String, firstAt: Double, lastAt: Double, deletedAt: Double?) {
        (self.channel, self.firstAt, self.lastAt, self.deletedAt) = (channel, firstAt, lastAt, deletedAt)
    }

    /// When it was on air within `range`, or `nil`.
    package func onAir(within range: Range<Double>) -> Range<Double>? {
        let from = max(range.lowerBound, firstAt), to = min(range.upperBound, deletedAt ?? .infinity)
        return from < to ? from..<to : nil
    }
}

extension ChannelSpan? {
    /// Records of the channel heard from `first` to `last`, and a deletion at `deleted`, in any
    /// order of arrival: a deletion stands only when nothing was heard after it.
    package mutating func heard(from first: Double?, to last: Double?, deletedAt deleted: Double?, channel: String) {
        guard let start = first ?? deleted else { return }
        var span = self ?? ChannelSpan(channel: channel, firstAt: start, lastAt: last ?? start, deletedAt: nil)
        span.firstAt = min(span.firstAt, start)
        if let last { span.lastAt = max(span.lastAt, last) }
        let deletion = [span.deletedAt, deleted].compactMap { $0 }.max()
        span.deletedAt = deletion.flatMap { $0 >= span.lastAt ? $0 : nil }
        self = span
    }
}
