import Foundation

/// Recognises MPEG-TS from its first bytes: a 0x47 sync byte every 188 bytes. Telling
/// libavformat the format up front skips its probe, which on a large file costs more than
/// the demuxing itself (docs/PERFORMANCE.md).
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

    /// "mpegts" when the local file at `path` starts as MPEG-TS; `nil` (let libavformat probe) otherwise.
    public static func formatName(ofFileAt path: String) -> String? {
        guard !Location.hasScheme(path) || path.hasPrefix("file:"),
              let handle = FileHandle(forReadingAtPath: path.hasPrefix("file:") ? String(path.dropFirst(5)) : path) else { return nil }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: packetsToCheck * packetSize)).map { [UInt8]($0) } ?? []
        return head.count >= packetsToCheck * packetSize && offset(in: head) == 0 ? "mpegts" : nil
    }
}
