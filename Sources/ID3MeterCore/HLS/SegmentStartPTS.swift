/// The presentation time a TS segment starts at: the earliest PTS among the first PES
/// packet of each PID. A segment's PROGRAM-DATE-TIME belongs to that instant, so a tag's
/// wall-clock time is the segment's date plus the tag's distance from it.
package enum SegmentStartPTS {
    private static let packetSize = TransportStreamSync.packetSize
    private static let packetsToScan = 2_000
    /// How much of a segment's front `find` looks at.
    package static let bytesScanned = packetsToScan * TransportStreamSync.packetSize

    package static func find(in bytes: [UInt8]) -> Int64? {
        guard let start = TransportStreamSync.offset(in: bytes) else { return nil }
        var seenPIDs = Set<Int>()
        var earliest: Int64?
        var offset = start
        var scanned = 0
        while offset + packetSize <= bytes.count, scanned < packetsToScan, bytes[offset] == 0x47 {
            defer { offset += packetSize; scanned += 1 }
            let pid = Int(bytes[offset + 1] & 0x1F) << 8 | Int(bytes[offset + 2])
            let payloadUnitStart = bytes[offset + 1] & 0x40 != 0
            guard payloadUnitStart, !seenPIDs.contains(pid), let pts = pesPTS(bytes, packet: offset) else { continue }
            seenPIDs.insert(pid)
            earliest = earliest.map { PTS.isBefore(pts, $0) ? pts : $0 } ?? pts
        }
        return earliest
    }

    /// ISO/IEC 13818-1 §2.4.3.6: after the adaptation field, the PES header.
    private static func pesPTS(_ bytes: [UInt8], packet: Int) -> Int64? {
        let adaptationControl = bytes[packet + 3] >> 4 & 0x3
        guard adaptationControl & 0x1 != 0 else { return nil }
        let payload = packet + 4 + (adaptationControl & 0x2 != 0 ? 1 + Int(bytes[packet + 4]) : 0)
        guard payload < packet + packetSize else { return nil }
        return PTS.inPESHeader(bytes[payload..<packet + packetSize])
    }
}
