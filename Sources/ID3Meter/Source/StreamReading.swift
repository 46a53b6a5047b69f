/// A stream libavformat reads, taken a chunk at a time by `BlockingPool` jobs, through one
/// reused buffer.
// Unchecked: its stream is used by one job at a time, each awaited before the next starts.
final class StreamReading: @unchecked Sendable {
    static let chunkSize = 1 << 20

    private let stream: ByteStream
    private var buffer = [UInt8](repeating: 0, count: chunkSize)

    init(_ stream: ByteStream) {
        self.stream = stream
    }

    /// The stream's size, when its protocol knows it.
    var size: Int64? { stream.size }

    /// The next bytes, at most `limit`: empty at the end; `nil` when none came within `wait`
    /// seconds (without one, the stream's I/O timeout ends the wait with an error).
    func next(upTo limit: Int = chunkSize, waitingAtMost wait: Double? = nil) throws(FetchError) -> [UInt8]? {
        let room = min(max(limit, 0), buffer.count)
        let got = try buffer.withUnsafeMutableBufferPointer { bytes throws(FetchError) -> Int? in
            let bytes = UnsafeMutableBufferPointer(rebasing: bytes[..<room])
            guard let wait else { return try stream.read(into: bytes) }
            return try stream.read(into: bytes, waitingAtMost: wait)
        }
        return got.map { Array(buffer[..<$0]) }
    }
}
