import CID3MeterShim
import Glibc

/// Bytes from the streams only libavformat's I/O layer speaks here (udp, srt, rtp, tcp), read
/// as they arrive. Only the protocols `ReferenceRule.protocols(for:)` allows for the URL
/// are ever opened, redirects included. Blocking: made, read and closed on `BlockingPool`
/// threads, by one job at a time.
package final class ByteStream {
    private var stream: OpaquePointer?
    /// Held for libavformat, which polls it through a pointer for as long as the stream is open.
    private let interrupt: Interrupt
    private let deadline: Double?

    /// `ioTimeout` ends a read that gets nothing for that long; `deadline` (seconds from now)
    /// ends everything, the connection included. With `range`, reading starts at its offset (the
    /// caller stops at its end).
    package init(url: String, interrupt: Interrupt = Interrupt(), ioTimeout: Double = 10, deadline: Double? = nil,
                range: ByteRange? = nil) throws(FetchError) {
        self.interrupt = interrupt
        self.deadline = deadline
        LibAVLog.clearLastError()
        let result = idm_stream_open(&stream, url, ReferenceRule.protocols(for: url), interrupt.pointer,
                                     Self.microseconds(ioTimeout), deadline.map(Self.microseconds) ?? 0,
                                     Int64(range?.offset ?? 0), Int64(range?.end ?? 0))
        if result < 0 { throw error(result) }
    }

    deinit { idm_stream_close(&stream) }

    /// The total size, when the protocol knows it (for http, what the server declares).
    package var size: Int64? {
        let size = idm_stream_size(stream)
        return size >= 0 ? size : nil
    }

    /// Reads into `buffer` as soon as some bytes are there; 0 at the end.
    package func read(into buffer: UnsafeMutableBufferPointer<UInt8>) throws(FetchError) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        LibAVLog.clearLastError()
        let result = idm_stream_read(stream, base, Int32(clamping: buffer.count))
        if result >= 0 { return Int(result) }
        if AVError(code: result).isEndOfFile { return 0 }
        throw error(result)
    }

    /// As `read(into:)`, waiting at most `wait` seconds for the first byte: `nil` when none came
    /// by then (the stream is still open), so that a silent stream holds a thread no longer.
    package func read(into buffer: UnsafeMutableBufferPointer<UInt8>, waitingAtMost wait: Double) throws(FetchError) -> Int? {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        LibAVLog.clearLastError()
        let result = idm_stream_read_within(stream, base, Int32(clamping: buffer.count), Self.microseconds(wait))
        if result >= 0 { return Int(result) }
        if result == -EAGAIN { return nil }
        if AVError(code: result).isEndOfFile { return 0 }
        throw error(result)
    }

    /// Bytes up to `limit`, fewer only at the end; with `keepingBytesBeforeAnError`, also when a
    /// read fails after some bytes came (a live stream falling silent: the next read fails again).
    package func read(upTo limit: Int, keepingBytesBeforeAnError: Bool = false) throws(FetchError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let got: Int
            do {
                got = try bytes.withUnsafeMutableBufferPointer { buffer throws(FetchError) in
                    try read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
                }
            } catch {
                if keepingBytesBeforeAnError, filled > 0 { break }
                throw error
            }
            if got == 0 { break }
            filled += got
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    private func error(_ code: Int32) -> FetchError {
        if let deadline, stream.map({ idm_stream_deadline_passed($0) != 0 }) == true { return .deadline(deadline) }
        return .libav(AVError(code: code, detail: LibAVLog.takeLastError()))
    }

    /// Microseconds for libavformat, which a `Double` of any size must not overflow.
    private static func microseconds(_ seconds: Double) -> Int64 {
        Int64(HTTPTransport.bounded(seconds) * 1_000_000)
    }
}
