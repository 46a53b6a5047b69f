import ID3MeterReport
import Synchronization

/// Which channels' spans (the `channels` table: first and last heard of, deleted) a batch needs
/// to write, by what this collector last wrote: a fleet's batch a second heard of 500 channels
/// made 500 row writes a second, a quarter of the database's work (docs/PERFORMANCE.md). A
/// channel is written when it is new to this collector, heard of earlier than written, heard of
/// in a later minute than written, or deleted; otherwise its last time waits here, and goes
/// with its next write (or `pending` when the collector stops). So the stored last time is
/// never more than its minute behind: the report's days and a deletion's standing, read by
/// minute, are unchanged. Bounded: a channel past `capacity` starts it again, each written anew.
final class ChannelSpanWrites: Sendable {
    struct Span: Equatable {
        var channel: String
        var first: Double
        var last: Double
        var deleted: Double?
    }

    private struct Written {
        var first: Double
        var last: Double
        /// The latest time heard of and not written.
        var waiting: Double? = nil
    }

    private let written = Mutex<[String: Written]>([:])
    private let capacity: Int

    init(capacity: Int = 200_000) { self.capacity = capacity }

    /// Of `spans` (a batch's), those to write now, each with the latest time heard of it. The
    /// others' times wait here. What is written is noted by `wrote`, once its transaction is
    /// committed: a batch rolled back leaves its channels to be written by the next.
    func toWrite(_ spans: [Span]) -> [Span] {
        written.withLock { written in
            spans.compactMap { span in
                var span = span
                if let known = written[span.channel], span.deleted == nil, span.first >= known.first,
                   CoverageMinute.minute(of: span.last) <= CoverageMinute.minute(of: known.last) {
                    written[span.channel]?.waiting = max(known.waiting ?? span.last, span.last)
                    return nil
                }
                span.last = max(span.last, written[span.channel]?.waiting ?? span.last)
                return span
            }
        }
    }

    /// `spans` are in the database (their transaction committed).
    func wrote(_ spans: [Span]) {
        written.withLock { written in
            for span in spans {
                if written[span.channel] == nil, written.count >= capacity { written = [:] }
                let known = written[span.channel]
                let last = max(known?.last ?? span.last, span.last)
                written[span.channel] = Written(first: min(known?.first ?? span.first, span.first), last: last,
                                                waiting: known?.waiting.flatMap { $0 > last ? $0 : nil })
            }
        }
    }

    /// The channels whose last time heard of waits, to write before the collector stops.
    func pending() -> [Span] {
        written.withLock { written in
            let waiting = written.compactMap { channel, known in
                known.waiting.flatMap { $0 > known.last ? Span(channel: channel, first: known.first, last: $0, deleted: nil) : nil }
            }
            for span in waiting { written[span.channel] = Written(first: span.first, last: span.last) }
            return waiting.sorted { $0.channel < $1.channel }
        }
    }
}
