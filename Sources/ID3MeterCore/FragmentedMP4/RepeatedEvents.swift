/// The in-band events handed out lately, to tell a repeat from a new event. Packagers repeat an
/// event's `emsg` in every segment it spans; ISO/IEC 23009-1 §5.10.3.3 makes boxes with the same
/// scheme, value and id one event, and players dispatch it once. A repeat is a copy of the box,
/// so its message is the same too. Requiring the same message as well means a packager that
/// reuses ids (some write 0 for every event) loses nothing: each Nielsen tag's bytes are its own.
///
/// A version 1 box states its presentation time, and a repeat states the same one: the time is
/// part of the event, as in shaka-player's region timeline (scheme, id, start), so boxes of one
/// id and message at other times are other events (shaka's SAMPLE-AES test stream has four).
/// A version 0 box's time counts from its own segment's start and cannot reach back, so its
/// repeat in a later segment is at a later time: it is told by scheme, value, id and message,
/// as dash.js tells every event (docs/CONFORMANCE.md).
///
/// Bounded: the newest `capacity` events are kept. A repeat comes within the segments its event
/// spans, seconds after the first box, and a Nielsen tag comes every few seconds, so the oldest
/// one forgotten is an hour old.
package struct RepeatedEvents: Sendable {
    package static let capacity = 1_024

    private var kept: [InbandEvent: Int] = [:]
    /// Events by age, with the serial they were kept under (one forgotten since is skipped).
    private var order: [(event: InbandEvent, serial: Int)] = []
    private var oldest = 0
    private var serial = 0

    package init() {}

    /// How many events are remembered, and how many places the age list holds (for the bound's test).
    var count: Int { kept.count }
    var ordered: Int { order.count }

    /// Whether `event` repeats one handed out before; when it does not, it is remembered.
    package mutating func isRepeat(_ event: InbandEvent) -> Bool {
        if kept[event] != nil { return true }
        serial += 1
        kept[event] = serial
        order.append((event, serial))
        if kept.count > Self.capacity { forgetOldest() }
        return false
    }

    private mutating func forgetOldest() {
        while oldest < order.count {
            let entry = order[oldest]
            oldest += 1
            if kept[entry.event] == entry.serial {
                kept[entry.event] = nil
                break
            }
        }
        if oldest > Self.capacity {
            order.removeFirst(oldest)
            oldest = 0
        }
    }
}

/// An `emsg` event as far as its identity goes: its scheme, value and id, and a digest of its
/// message (its tag's bytes).
package struct InbandEvent: Sendable, Hashable {
    package var scheme: String
    package var value: String
    package var id: Int
    /// A version 1 box's presentation time, in its timescale's units; `nil` for version 0.
    package var time: Int?
    package var message: Int

    package init(scheme: String, value: String, id: Int, time: Int? = nil, message: [UInt8]) {
        self.scheme = scheme
        self.value = value
        self.id = id
        self.time = time
        var hasher = Hasher()
        hasher.combine(message)
        self.message = hasher.finalize()
    }
}
