import ID3Meter

/// MPEG-TS written the way real muxers get timed ID3 wrong or unusual, each with the frames
/// a correct reader must find (libavformat 5.1 finds none or part of them).
public enum TransportStreamQuirks {
    static let start: Int64 = 900_000
    static let undeclaredPID = 0x0102
    static let secondPID = 0x0104

    /// One file with two timed-ID3 PIDs. The first has no metadata descriptor; its Nielsen
    /// tags are split over two PES (the second without a PTS), and its other tags come in PES
    /// without a PTS (they take the Nielsen tag's). The second PID is ordinary, with v2.3 tags.
    public static func file() -> (bytes: [UInt8], expected: [ExpectedFrame]) {
        var writer = TransportStreamWriter(payloadPerPacket: 120)
        writer.metadataPIDs = [.init(pid: undeclaredPID, hasDescriptor: false), .init(pid: secondPID)]
        let first = TagSchedule(flavour: .standard, startPTS: start, duration: 40, seed: 51)
        let second = TagSchedule(flavour: .v23, startPTS: start + 22_500, duration: 40, seed: 52)
        let merged = (first.packets.map { ($0, undeclaredPID) } + second.packets.map { ($0, secondPID) })
            .sorted { $0.0.pts < $1.0.pts }
        var bytes = writer.programTables()
        var expected: [ExpectedFrame] = []
        var lastPTS: [Int: Int64] = [:]
        for (packet, pid) in merged {
            let payload = packet.bytes
            var timed = packet
            if pid == secondPID {
                bytes += writer.pes(pts: packet.pts, payload: payload, pid: pid)
            } else if packet.tags.contains(where: \.isNielsen) {
                bytes += writer.pes(pts: packet.pts, payload: Array(payload.prefix(100)), pid: pid)
                bytes += writer.pes(pts: nil, payload: Array(payload.dropFirst(100)), pid: pid)
            } else {
                bytes += writer.pes(pts: nil, payload: payload, pid: pid)
                timed.pts = lastPTS[pid] ?? packet.pts
            }
            if pid == undeclaredPID, packet.tags.contains(where: \.isNielsen) { lastPTS[pid] = packet.pts }
            expected += TagSchedule(packets: [timed]).expectedFrames()
        }
        return (bytes, expected)
    }

    /// Three 10 s HLS segments. A Nielsen tag's PES starts in the last TS packet of the
    /// first segment and ends in the second; another tag is split over two PES, the second
    /// (without a PTS) opening the third segment. Each segment starts with its PAT and PMT.
    public static func segments() -> (segments: [[UInt8]], expected: [ExpectedFrame]) {
        var writer = TransportStreamWriter(payloadPerPacket: 100)
        let boundary: (Int) -> Int64 = { start + Int64($0) * 900_000 }
        // Nothing else in the half second before a boundary, so the cut tags are last.
        let schedule = TagSchedule(flavour: .standard, startPTS: start, duration: 30, seed: 61).packets.filter { packet in
            !(1...2).contains { packet.pts > boundary($0) - 45_000 && packet.pts < boundary($0) + 45_000 }
        }
        var factory = NielsenTagFactory(seed: 62)
        let cut = (1...2).map { index in
            ScheduledPacket(pts: boundary(index) - 4_500, tags: [
                ID3TagSpec(version: .v2_4, frames: [.priv(owner: factory.owner(secondsIntoDay: 36_000 + 10 * index), data: [0x41])],
                           extraFlags: 0x20)])
        }
        var segments = [writer.programTables()]
        var expected: [ExpectedFrame] = []
        for packet in (schedule + cut).sorted(by: { $0.pts < $1.pts }) {
            let index = (1...2).last { packet.pts >= boundary($0) } ?? 0
            while segments.count <= index { segments.append(writer.programTables()) }
            expected += TagSchedule(packets: [packet]).expectedFrames { _ in "seg\(index).ts" }
            let payload = packet.bytes
            if packet.pts == cut[0].pts {
                let ts = writer.pes(pts: packet.pts, payload: payload)
                segments[index] += ts.prefix(188)
                segments.append(writer.programTables() + ts.dropFirst(188))
            } else if packet.pts == cut[1].pts {
                segments[index] += writer.pes(pts: packet.pts, payload: Array(payload.prefix(120)))
                segments.append(writer.programTables() + writer.pes(pts: nil, payload: Array(payload.dropFirst(120))))
            } else {
                segments[index] += writer.pes(pts: packet.pts, payload: payload)
            }
        }
        return (segments, expected)
    }
}

extension ID3TagSpec {
    var isNielsen: Bool {
        frames.contains { $0.id == "PRIV" && $0.data.starts(with: Array(NielsenTag.ownerPrefix.utf8)) }
    }
}
