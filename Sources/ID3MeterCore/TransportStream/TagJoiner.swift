/// Turns the PES payloads of one timed-ID3 PID into whole tags. A tag larger than one PES
/// continues in PES packets without a PTS (possibly in the next HLS segment); those are
/// joined to it. A PES without a PTS that starts a tag of its own takes the PID's previous
/// PTS, noted on the packet.
struct TagJoiner: Equatable {
    /// Waiting for more bytes stops here: a declared size beyond it is damage, not a big tag.
    static let maximumTagBytes = 1 << 20

    let pid: Int
    /// The program whose PMT lists the PID (program_number), and that program's audio PID.
    var program: Int?
    var audioPID: Int?
    /// The PID's PMT entry lacks the metadata descriptor (worth a note on each packet).
    var isUndeclared = false
    private var pending: TimedID3Packet?
    private var pesCount = 0
    private var lastPTS: Int64?

    init(pid: Int) { self.pid = pid }

    var isWaiting: Bool { pending != nil }
    /// Bytes of the tag in progress.
    var heldByteCount: Int { pending?.bytes.count ?? 0 }
    /// A PES with a PTS has been read: what a later PES without one is timed by.
    var hasTimed: Bool { lastPTS != nil }

    mutating func accept(_ payload: ArraySlice<UInt8>, pts: Int64?, audioPTS: Int64?, position: Int64, unit: Int,
                         emit: (TimedID3Packet) -> Void) {
        defer { if let pts { lastPTS = pts } }
        if var tag = pending, !ID3TagParser.hasHeader(Array(payload.prefix(3)), at: 0) {
            tag.bytes += payload
            pesCount += 1
            pending = tag
            if Self.missingBytes(tag.bytes) == 0 { release(emit) }
            return
        }
        release(emit)
        var notes: [String] = []
        var faults: Carriage.Faults = []
        if isUndeclared {
            notes.append("timed-ID3 PID \(Self.hex(pid)) has no metadata descriptor in the PMT")
            faults.insert(.undeclaredStream)
        }
        if pts == nil {
            if lastPTS != nil { notes.append("PES without PTS: time taken from the previous PES on PID \(Self.hex(pid))") }
            faults.insert(.noPTS)
        }
        pending = TimedID3Packet(bytes: Array(payload), pts: pts ?? lastPTS, pid: pid, program: program, position: position, unit: unit,
                                 notes: notes, faults: faults, audioPTS: audioPTS)
        pesCount = 1
        if Self.missingBytes(pending!.bytes) == 0 { release(emit) }
    }

    /// Hands over the tag in progress, whole or not (at the end of the input, or before a new one).
    mutating func release(_ emit: (TimedID3Packet) -> Void) {
        guard var tag = pending else { return }
        if pesCount > 1 { tag.notes.append("tag joined from \(pesCount) PES packets") }
        pending = nil
        emit(tag)
    }

    /// How many more bytes the back-to-back tags in `bytes` declare than are there; zero when
    /// they are whole, or when what follows is no tag (the parser will say what it is).
    static func missingBytes(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count, ID3TagParser.hasHeader(bytes, at: offset) {
            guard offset + ID3TagParser.headerLength <= bytes.count else { return offset + ID3TagParser.headerLength - bytes.count }
            guard let size = ID3TagParser.declaredByteCount(bytes, at: offset) else { return 0 }
            let end = offset + size
            if end > bytes.count { return end - offset > maximumTagBytes ? 0 : end - bytes.count }
            offset = end
        }
        return 0
    }

    static func hex(_ pid: Int) -> String {
        let digits = String(pid, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
