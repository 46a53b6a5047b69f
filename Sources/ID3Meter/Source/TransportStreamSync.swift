import Foundation

/// Recognises MPEG-TS from its first bytes: a 0x47 sync byte every 188 bytes.
public enum TransportStreamSync {
    public static let packetSize = 188
    private static let packetsToCheck = 3

    /// The offset of the first packet, when the bytes are MPEG-TS.
    public static func offset<C: Collection>(in bytes: C) -> Int? where C.Element == UInt8, C.Index == Int {
        let available = bytes.count
        return (0..<min(packetSize, available)).first { start in
            let checks = stride(from: start, to: min(available, start + packetsToCheck * packetSize), by: packetSize)
            return checks.allSatisfy { bytes[bytes.startIndex + $0] == 0x47 }
        }
    }
}
