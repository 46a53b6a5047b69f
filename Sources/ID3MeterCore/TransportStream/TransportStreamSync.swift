import FoundationEssentials

/// Recognises MPEG-TS from its first bytes: a 0x47 sync byte every 188 bytes, several times
/// over. One 0x47 proves nothing (it is "G", and common in any data).
package enum TransportStreamSync {
    package static let packetSize = 188
    private static let packetsToCheck = 5

    /// The offset of the first packet, when the bytes are MPEG-TS: sync bytes at `packetsToCheck`
    /// packet starts, or at every packet start there is when fewer are there, and at least two.
    package static func offset<C: Collection>(in bytes: C) -> Int? where C.Element == UInt8, C.Index == Int {
        let available = bytes.count
        return (0..<min(packetSize, available)).first { start in
            let checks = Array(stride(from: start, to: min(available, start + packetsToCheck * packetSize), by: packetSize))
            return checks.count >= 2 && checks.allSatisfy { bytes[bytes.startIndex + $0] == 0x47 }
        }
    }
}
