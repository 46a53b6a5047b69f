/// Reads the ID3 tags that fMP4/CMAF media carries in `emsg` boxes (AOM id3-emsg, or
/// Nielsen's scheme), timed as a player times them: version 1 by its presentation time,
/// version 0 by its delta from the earliest time of the fragment that follows it (its
/// `tfdt`, in the track's timescale from the initialisation segment). libavformat 5.1 has no
/// emsg support, so this is done here.
///
/// Top-level boxes are walked as the bytes arrive: `moov`, `moof` and `emsg` are held whole
/// (up to `maximumBoxBytes`), everything else (`mdat` above all) is stepped over unread.
///
/// Composition offsets and edit lists are not applied to that earliest time, as hls.js does
/// not apply them to emsg either; the times are in 90 kHz ticks, truncated, 33 bits.
struct FragmentReader: TagExtractor {
    /// A box that must be read whole and is larger than this is reported and stepped over.
    static let maximumBoxBytes = 16 << 20
    private static let keptTypes: Set<String> = ["moov", "moof", "emsg"]
    /// Messages held for the next `moof` at most: past this, they are timed by the last one seen
    /// (as at the end of the bytes), so that boxes of messages without a fragment cannot pile up.
    static let maximumWaitingMessages = 1_000

    /// Where the tags are read; a segment's gets its first PTS from its first fragment.
    private var origin: TagOrigin
    private var timescales: [Int: Int]
    /// Untimed version-0 messages are warned of once.
    private var saidUntimed = false
    /// The front of the box being read: its header, or the whole of a kept box.
    private var pending: [UInt8] = []
    /// Where `pending` starts in the input.
    private var position = 0
    /// Content still to step over of a box that is not kept; `nil` once the boxes stopped making sense.
    private var skipping: Int? = 0
    /// Messages since the last `moof`, in order: a version 0 one is timed by the next fragment.
    private var waiting: [Result<EventMessage, ID3ParseError>] = []
    private var lastFragmentStart: Int64?
    private var sawFragment = false
    /// Events handed out from these bytes: a box repeated in a later fragment is not delivered again.
    private var repeats = RepeatedEvents()

    /// `timescales` come from the initialisation segment; a `moov` in the bytes (a whole file) adds to them.
    init(timescales: TrackTimescales?, origin: TagOrigin) {
        self.timescales = timescales?.byTrackID ?? [:]
        self.origin = origin
    }

    /// Whether `bytes` start like ISO BMFF: a box type a file or a media segment begins with.
    static func isFragmentedMP4(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8 else { return false }
        let type = String(decoding: bytes[4..<8], as: UTF8.self)
        return ["ftyp", "styp", "moov", "moof", "emsg", "sidx", "prft"].contains(type)
    }

    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void) {
        var rest = bytes[...]
        while !rest.isEmpty, let left = skipping {
            if left > 0 {
                let step = min(left, rest.count)
                skipping = left - step
                rest = rest.dropFirst(step)
                position += step
                continue
            }
            let take = max(needed() - pending.count, 1)
            pending.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            walk(emit: emit)
        }
    }

    var firstPTS: Int64? { origin.segment?.startPTS }

    mutating func finish(emit: (MediaEvent) -> Void) {
        if skipping == 0, let header = Box.Header(pending), header.size == nil, Self.keptTypes.contains(header.type) {
            process(type: header.type, bytes: pending, contentStart: header.length, emit: emit)
        }
        // A box cut short at the end holds nothing that can be read.
        pending = []
        flushWaiting(emit: emit)
    }

    /// How many bytes of the box at the front must be held: its header, or all of a kept box.
    private func needed() -> Int {
        guard pending.count >= 8 else { return 8 }
        guard let header = Box.Header(pending) else { return 16 }
        guard Self.keptTypes.contains(header.type) else { return header.length }
        return header.size.map { $0 <= Self.maximumBoxBytes ? $0 : header.length } ?? Self.maximumBoxBytes + 1
    }

    /// Reads or steps over the boxes at the front of `pending` while there are bytes for them.
    private mutating func walk(emit: (MediaEvent) -> Void) {
        while skipping == 0, let header = Box.Header(pending) {
            let kept = Self.keptTypes.contains(header.type)
            guard let size = header.size else {
                // Size 0: the box runs to the end of the bytes; a kept one is read then, if it is not too large.
                if !kept || pending.count > Self.maximumBoxBytes { skipping = nil }
                return
            }
            guard size >= header.length else {
                skipping = nil   // a box smaller than its header: nothing after it can be placed
                return
            }
            if kept, size <= Self.maximumBoxBytes {
                guard pending.count >= size else { return }
                process(type: header.type, bytes: Array(pending[..<size]), contentStart: header.length, emit: emit)
                pending.removeFirst(size)
                position += size
                continue
            }
            if kept {
                emit(.malformed(ID3ParseError(.boxTooLarge(type: header.type, size: size, maximum: Self.maximumBoxBytes), offset: position),
                                pts: nil, origin: origin))
            }
            if pending.count >= size {
                pending.removeFirst(size)
                position += size
                continue
            }
            skipping = size - pending.count
            position += pending.count
            pending.removeAll(keepingCapacity: true)
        }
    }

    private mutating func process(type: String, bytes: [UInt8], contentStart: Int, emit: (MediaEvent) -> Void) {
        let box = Box(type: type, content: contentStart..<bytes.count)
        switch type {
        case "moov":
            if let own = TrackTimescales(initSegment: bytes) { timescales.merge(own.byTrackID) { _, own in own } }
        case "moof":
            lastFragmentStart = Self.earliestTicks(of: box, in: bytes, timescales: timescales)
            if !sawFragment {
                sawFragment = true
                // The segment starts at its first fragment's earliest time, which its
                // PROGRAM-DATE-TIME belongs to: its tags' dates are counted from there.
                if origin.segment?.startPTS == nil { origin.segment?.startPTS = lastFragmentStart.map(PTS.asCarried) }
            }
            flushWaiting(emit: emit)
        default:
            let message = EventMessage.parse(bytes, box: box).mapError { $0.shifted(by: position) }
            if case .success(let parsed) = message, !parsed.carriesID3 { return }
            // Before the first fragment, a version 1 message waits too: its segment's start is not yet known.
            if waiting.isEmpty, sawFragment, case .success(let parsed) = message, case .absolute = parsed.time {
                deliver(parsed, emit: emit)
            } else {
                waiting.append(message)   // after a version 0 message, in order
                if waiting.count >= Self.maximumWaitingMessages { flushWaiting(emit: emit) }
            }
        }
    }

    /// The waiting messages, timed by the fragment that just started (or, at the end, the last one).
    private mutating func flushWaiting(emit: (MediaEvent) -> Void) {
        for message in waiting {
            switch message {
            case .success(let message): deliver(message, emit: emit)
            case .failure(let error): emit(.malformed(error, pts: nil, origin: origin))
            }
        }
        waiting.removeAll()
    }

    private mutating func deliver(_ message: EventMessage, emit: (MediaEvent) -> Void) {
        var notes: [String] = []
        let pts: Int64?
        switch message.time {
        case .absolute(let time):
            pts = Self.ticks(time, timescale: message.timescale)
        case .delta(let delta):
            if let start = lastFragmentStart, let offset = Self.ticks(delta, timescale: message.timescale) {
                pts = start &+ offset
            } else {
                pts = nil
                notes.append("no time: the fragment's start is unknown (no moof, tfdt or init segment timescale)")
                if !saidUntimed {
                    saidUntimed = true
                    emit(.warning(InputFailure(source: origin.source, segment: origin.segment?.uri, .untimedEventMessages)))
                }
            }
        }
        var carriage = Carriage(stream: "emsg \(message.schemeIDURI)")
        carriage.note = "emsg \(message.time.version) \(message.schemeIDURI)"
        var stated: Int?
        if case .absolute(let time) = message.time { stated = time }
        let event = InbandEvent(scheme: message.schemeIDURI, value: message.value, id: message.id, time: stated, message: message.messageData)
        if repeats.isRepeat(event) { return }
        carriage.event = event
        let contents = ID3PacketParser.parse(message.messageData)
        if message.schemeIDURI == Carriage.nielsenEventScheme, message.value != "1" {
            notes.append("emsg of scheme \(Carriage.nielsenEventScheme) with value '\(message.value)', expected '1'")
            carriage.faults.insert(.eventValue)
        }
        for var tag in contents.tags {
            tag.notes += notes
            emit(.tag(TimedTag(tag: tag, pts: pts.map(PTS.asCarried), origin: origin, carriage: carriage)))
        }
        if let error = contents.error { emit(.malformed(error, pts: pts.map(PTS.asCarried), origin: origin)) }
    }

    /// The earliest `tfdt` among the fragment's tracks, in 90 kHz ticks.
    private static func earliestTicks(of moof: Box, in bytes: [UInt8], timescales: [Int: Int]) -> Int64? {
        moof.children(in: bytes).filter { $0.type == "traf" }.compactMap { traf -> Int64? in
            guard var (_, header) = traf.child("tfhd", in: bytes)?.fullBoxFields(in: bytes), let track = header.readInt(4),
                  let timescale = timescales[track],
                  case (let version, var fields)? = traf.child("tfdt", in: bytes)?.fullBoxFields(in: bytes),
                  let decodeTime = fields.readInt(version == 1 ? 8 : 4) else { return nil }
            return ticks(decodeTime, timescale: timescale)
        }.min()
    }

    /// `value` / `timescale` seconds in 90 kHz ticks; 64-bit times wrap as 33-bit PTS do.
    private static func ticks(_ value: Int, timescale: Int) -> Int64? {
        guard timescale > 0, value >= 0 else { return nil }
        let whole = value / timescale, part = value % timescale
        let (wholeTicks, overflow) = Int64(whole).multipliedReportingOverflow(by: PTS.clockRate)
        guard !overflow else { return nil }
        return wholeTicks &+ Int64(part) * PTS.clockRate / Int64(timescale)
    }
}

private extension EventMessage.Time {
    var version: String {
        switch self {
        case .delta: "v0"
        case .absolute: "v1"
        }
    }
}
