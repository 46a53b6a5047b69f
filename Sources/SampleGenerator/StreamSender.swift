import CLibAV
import Foundation

/// Sends MPEG-TS bytes to a URL through libavformat's output protocols (`udp`, `srt`), seven TS
/// packets a write as broadcast encoders do, paced, for the tests of those inputs.
public enum StreamSender {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Blocks until everything is sent (an SRT listener first waits for its caller), then holds
    /// the connection `linger` seconds: SRT drops what is still in its latency buffer at close.
    public static func send(_ bytes: [UInt8], to url: String, pause: Double = 0.000_5, linger: Double = 0) throws {
        var io: UnsafeMutablePointer<AVIOContext>?
        let opened = avio_open(&io, url, AVIO_FLAG_WRITE)
        guard opened >= 0, let context = io else { throw Failure(description: "cannot open \(url) for writing: error \(opened)") }
        defer { avio_closep(&io) }
        let chunk = 7 * 188
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            bytes[start..<min(bytes.count, start + chunk)].withUnsafeBufferPointer {
                avio_write(context, $0.baseAddress, Int32($0.count))
            }
            avio_flush(context)
            Thread.sleep(forTimeInterval: pause)
        }
        Thread.sleep(forTimeInterval: linger)
    }
}
