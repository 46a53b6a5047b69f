/// A small MPEG-TS writer that follows Apple's "Timed Metadata for HTTP Live Streaming"
/// to the letter, independent of libavformat: PAT, a PMT with the metadata_pointer and
/// metadata descriptors, ID3 in PES packets with stream_type 0x15 and stream_id 0xBD.
/// It can cut each PES into payloads of any size, to test reassembly, and write the quirks
/// found in the field: timed-ID3 PIDs without the metadata descriptor, several of them, PES
/// packets without a PTS.
public struct TransportStreamWriter {
    public static let pmtPID = 0x1000
    public static let id3PID = 0x0102
    public static let fillerPID = 0x0100

    /// A timed-ID3 PID in the PMT, with or without its metadata descriptor.
    public struct MetadataPID: Sendable {
        public var pid: Int
        public var hasDescriptor: Bool

        public init(pid: Int, hasDescriptor: Bool = true) {
            self.pid = pid
            self.hasDescriptor = hasDescriptor
        }
    }

    public var metadataPIDs = [MetadataPID(pid: id3PID)]

    /// PES bytes per TS packet, 1 to 184; the rest of each packet is adaptation-field stuffing.
    public var payloadPerPacket: Int
    /// Declares a video PID (stream_type 0x1B) for `filler(pts:size:)`, so a stream has a realistic bitrate.
    public var hasFillerPID: Bool
    private var continuity: [Int: UInt8] = [:]

    public init(payloadPerPacket: Int = 184, fillerPID: Bool = false) {
        self.payloadPerPacket = min(max(payloadPerPacket, 1), 184)
        hasFillerPID = fillerPID
    }

    /// PAT and PMT, to start a file or a segment with.
    public mutating func programTables() -> [UInt8] {
        let pat: [UInt8] = [0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00,
                            0x00, 0x01, 0xE0 | UInt8(Self.pmtPID >> 8), UInt8(Self.pmtPID & 0xFF)]
        let id3 = Array("ID3 ".utf8)
        // ISO/IEC 13818-1 §2.6.58: metadata_pointer_descriptor, format 0xFFFF + 'ID3 ', service 0.
        let pointer: [UInt8] = [0x25, 0x0F, 0xFF, 0xFF] + id3 + [0xFF] + id3 + [0x00, 0x1F, 0x00, 0x01]
        // §2.6.60: metadata_descriptor with the same identifiers.
        let metadata: [UInt8] = [0x26, 0x0D, 0xFF, 0xFF] + id3 + [0xFF] + id3 + [0x00, 0x0F]
        let pcrPID = metadataPIDs.first?.pid ?? Self.id3PID
        var pmtBody: [UInt8] = [0x00, 0x01, 0xC1, 0x00, 0x00,
                                0xE0 | UInt8(pcrPID >> 8), UInt8(pcrPID & 0xFF),
                                0xF0, UInt8(pointer.count)] + pointer
        if hasFillerPID { pmtBody += [0x1B, 0xE0 | UInt8(Self.fillerPID >> 8), UInt8(Self.fillerPID & 0xFF), 0xF0, 0x00] }
        for stream in metadataPIDs {
            let esInfo = stream.hasDescriptor ? metadata : []
            pmtBody += [0x15, 0xE0 | UInt8(stream.pid >> 8), UInt8(stream.pid & 0xFF), 0xF0, UInt8(esInfo.count)] + esInfo
        }
        let pmt: [UInt8] = [0x02, 0xB0, UInt8(pmtBody.count + 4)] + pmtBody
        return section(pid: 0, pat) + section(pid: Self.pmtPID, pmt)
    }

    /// One timed-ID3 PES packet carrying `payload` at `pts` (none when `nil`), as TS packets.
    public mutating func pes(pts: Int64?, payload: [UInt8], pid: Int = id3PID) -> [UInt8] {
        pes(pid: pid, streamID: 0xBD, pts: pts, payload: payload)
    }

    /// A video PES of `size` zero bytes on the filler PID.
    public mutating func filler(pts: Int64, size: Int) -> [UInt8] {
        pes(pid: Self.fillerPID, streamID: 0xE0, pts: pts, payload: [UInt8](repeating: 0, count: size))
    }

    private mutating func pes(pid: Int, streamID: UInt8, pts: Int64?, payload: [UInt8]) -> [UInt8] {
        let headerData = pts.map(Self.ptsField) ?? []
        let length = 3 + headerData.count + payload.count
        var pes: [UInt8] = [0x00, 0x00, 0x01, streamID,
                            length > 0xFFFF ? 0 : UInt8(length >> 8), length > 0xFFFF ? 0 : UInt8(length & 0xFF),
                            0x84, pts == nil ? 0x00 : 0x80, UInt8(headerData.count)] + headerData
        pes += payload
        var packets: [UInt8] = []
        var offset = 0
        while offset < pes.count {
            let chunk = min(payloadPerPacket, pes.count - offset)
            packets += packet(pid: pid, start: offset == 0, payload: pes[offset..<offset + chunk])
            offset += chunk
        }
        return packets
    }

    private mutating func section(pid: Int, _ table: [UInt8]) -> [UInt8] {
        let withCRC = table + Self.crc32(table)
        return packet(pid: pid, start: true, payload: ([0x00] + withCRC)[...])
    }

    private mutating func packet(pid: Int, start: Bool, payload: ArraySlice<UInt8>) -> [UInt8] {
        let counter = continuity[pid, default: 0]
        continuity[pid] = (counter + 1) & 0x0F
        let stuffing = 184 - payload.count
        var bytes: [UInt8] = [0x47, (start ? 0x40 : 0) | UInt8(pid >> 8), UInt8(pid & 0xFF),
                              (stuffing > 0 ? 0x30 : 0x10) | counter]
        if stuffing > 0 {
            bytes.append(UInt8(stuffing - 1))
            if stuffing > 1 { bytes += [0x00] + [UInt8](repeating: 0xFF, count: stuffing - 2) }
        }
        return bytes + payload
    }

    /// '0010' PTS only, with marker bits (§2.4.3.7).
    private static func ptsField(_ pts: Int64) -> [UInt8] {
        let value = pts & ((1 << 33) - 1)
        return [UInt8(0x21 | (value >> 29) & 0x0E), UInt8(value >> 22 & 0xFF), UInt8((value >> 14) & 0xFE | 1),
                UInt8(value >> 7 & 0xFF), UInt8((value << 1) & 0xFE | 1)]
    }

    /// CRC-32/MPEG-2: polynomial 0x04C11DB7, not reflected, initial value all ones.
    public static func crc32(_ bytes: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc >> $0) }
    }
}
