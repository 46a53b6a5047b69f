import CID3MeterShim

/// Bytes from any protocol libavformat's I/O layer speaks (file, http, https, udp, srt, ...),
/// read as they arrive. Blocking and not thread-safe: Sendable only so that a
/// `BlockingExecutor`, which runs one call at a time, can own it.
public final class ByteStream: @unchecked Sendable {
    private var stream: OpaquePointer?
    /// Held for libavformat, which polls it through a pointer for as long as the stream is open.
    private let interrupt: Interrupt

    public init(url: String, interrupt: Interrupt = Interrupt(), ioTimeout: Double = 10) throws(AVError) {
        self.interrupt = interrupt
        try AVError.check(idm_stream_open(&stream, url, interrupt.pointer, Int64(ioTimeout * 1_000_000)))
    }

    deinit { idm_stream_close(&stream) }

    /// The total size, when the protocol knows it.
    public var size: Int64? {
        let size = idm_stream_size(stream)
        return size >= 0 ? size : nil
    }

    /// Reads into `buffer` as soon as some bytes are there; 0 at the end.
    public func read(into buffer: UnsafeMutableBufferPointer<UInt8>) throws(AVError) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        let result = idm_stream_read(stream, base, Int32(clamping: buffer.count))
        if result >= 0 { return Int(result) }
        let error = AVError(code: result)
        if error.isEndOfFile { return 0 }
        throw error
    }

    /// Everything up to the end.
    public func readAll() throws(AVError) -> [UInt8] {
        try read(upTo: Int.max)
    }

    /// Bytes up to `limit`, fewer only at the end; with `keepingBytesBeforeAnError`, also when a
    /// read fails after some bytes came (a live stream falling silent: the next read fails again).
    public func read(upTo limit: Int, keepingBytesBeforeAnError: Bool = false) throws(AVError) -> [UInt8] {
        let chunk = 256 << 10
        let expected = size.map { Int(clamping: $0) + 1 } ?? chunk
        var bytes = [UInt8](repeating: 0, count: min(limit, expected, 1 << 30))
        var filled = 0
        while filled < limit {
            if filled == bytes.count { bytes += [UInt8](repeating: 0, count: min(limit - filled, max(chunk, bytes.count))) }
            let count = bytes.count
            let got: Int
            do {
                got = try bytes.withUnsafeMutableBufferPointer { buffer throws(AVError) in
                    try read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled..<count]))
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
}
