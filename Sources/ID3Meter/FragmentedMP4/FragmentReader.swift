/// Reads the ID3 tags that fMP4/CMAF media carries in `emsg` boxes (AOM id3-emsg, or
/// Nielsen's scheme), timed as a player times them: version 1 by its presentation time,
/// version 0 by its delta from the earliest time of the fragment that follows it (its
/// `tfdt`, in the track's timescale from the initialisation segment). libavformat 5.1 has no
/// emsg support, so this is done here.
///
/// Composition offsets and edit lists are not applied to that earliest time, as hls.js does
/// not apply them to emsg either; the times are in 90 kHz ticks, truncated, 33 bits.
enum FragmentReader {
    /// Whether `bytes` start like ISO BMFF: a box type a file or a media segment begins with.
    static func isFragmentedMP4(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8 else { return false }
        let type = String(decoding: bytes[4..<8], as: UTF8.self)
        return ["ftyp", "styp", "moov", "moof", "emsg", "sidx", "prft"].contains(type)
    }

    /// `timescales` come from the initialisation segment; a `moov` in `bytes` (a whole file) adds to them.
    static func read(_ bytes: [UInt8], timescales: TrackTimescales?, origin: TagOrigin, emit: (ScanEvent) -> Void) {
        let boxes = Box.children(of: bytes)
        var known = timescales?.byTrackID ?? [:]
        if let own = TrackTimescales(initSegment: bytes) { known.merge(own.byTrackID) { _, own in own } }
        let fragmentStarts: [(index: Int, ticks: Int64?)] = boxes.indices.filter { boxes[$0].type == "moof" }.map { index in
            (index, earliestTicks(of: boxes[index], in: bytes, timescales: known))
        }
        for (index, box) in boxes.enumerated() where box.type == "emsg" {
            let message: EventMessage
            switch EventMessage.parse(bytes, box: box) {
            case .success(let parsed): message = parsed
            case .failure(let error):
                emit(.malformed(error, pts: nil, origin: origin))
                continue
            }
            guard message.carriesID3 else { continue }
            var notes = ["emsg \(message.time.version) \(message.schemeIDURI)"]
            let pts: Int64?
            switch message.time {
            case .absolute(let time):
                pts = ticks(time, timescale: message.timescale)
            case .delta(let delta):
                let fragment = fragmentStarts.first { $0.index > index } ?? fragmentStarts.last
                if let start = fragment?.ticks, let offset = ticks(delta, timescale: message.timescale) {
                    pts = start &+ offset
                } else {
                    pts = nil
                    notes.append("no time: the fragment's start is unknown (no moof, tfdt or init segment timescale)")
                }
            }
            let contents = ID3PacketParser.parse(message.messageData)
            for var tag in contents.tags {
                tag.notes += notes
                emit(.tag(TimedTag(tag: tag, pts: pts.map(PTS.asCarried), origin: origin)))
            }
            if let error = contents.error { emit(.malformed(error, pts: pts.map(PTS.asCarried), origin: origin)) }
        }
    }

    /// The earliest `tfdt` among the fragment's tracks, in 90 kHz ticks.
    private static func earliestTicks(of moof: Box, in bytes: [UInt8], timescales: [Int: Int]) -> Int64? {
        moof.children(in: bytes).filter { $0.type == "traf" }.compactMap { traf -> Int64? in
            guard var (_, header) = traf.child("tfhd", in: bytes)?.fullBoxFields(in: bytes), let track = header.readInt(4),
                  let timescale = timescales[track],
                  var (version, fields) = traf.child("tfdt", in: bytes)?.fullBoxFields(in: bytes),
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
