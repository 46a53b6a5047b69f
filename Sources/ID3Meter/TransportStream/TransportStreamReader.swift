import Foundation

/// Feeds a byte stream through a `TimedID3Demuxer` as its bytes arrive, in one reused buffer.
enum TransportStreamReader {
    static let chunkSize = 1 << 20

    /// Opens `url` and reads its first `prefixBytes`, enough to tell it is MPEG-TS (and, if asked
    /// for more, to probe its streams).
    static func open(_ url: String, fetcher: Fetcher, prefixBytes: Int) throws(InputFailure)
        -> (stream: ByteStream, prefix: [UInt8]) {
        let stream: ByteStream, prefix: [UInt8]
        do {
            stream = try ByteStream(url: url, interrupt: fetcher.interrupt, ioTimeout: fetcher.ioTimeout)
            prefix = try stream.read(upTo: prefixBytes, keepingBytesBeforeAnError: true)
        } catch {
            throw InputFailure(source: url, reason: "cannot open: \(error)")
        }
        if prefix.isEmpty { throw InputFailure(source: url, reason: "cannot read: it is empty") }
        guard MediaForm.sniff(prefix) == .transportStream else {
            throw InputFailure(source: url, reason:
                "cannot read: not MPEG-TS (no sync byte every 188 bytes), packed audio or an HLS playlist")
        }
        return (stream, prefix)
    }

    /// Reads to the end, or to a read error, which is thrown once what came before is demuxed.
    /// `prefix` is bytes already taken from the stream's front (a probe), demuxed first.
    static func read(_ stream: ByteStream, prefix: [UInt8] = [], demuxer: inout TimedID3Demuxer,
                     progress: (Int64) -> Void = { _ in }, emit: (TimedID3Demuxer.Event) -> Void) throws(FetchError) {
        // The demuxer leaves less than two packets unused, so this always has room for a chunk.
        var buffer = prefix + [UInt8](repeating: 0, count: chunkSize + 2 * TransportStreamSync.packetSize)
        var filled = prefix.count
        var offset: Int64 = 0
        var atEnd = false
        var failure: FetchError?
        while !atEnd {
            let count = buffer.count
            var got = 0
            do {
                got = try buffer.withUnsafeMutableBufferPointer { bytes throws(FetchError) in
                    try stream.read(into: UnsafeMutableBufferPointer(rebasing: bytes[filled..<min(count, filled + chunkSize)]))
                }
            } catch {
                failure = error   // what came before is still demuxed
            }
            atEnd = got == 0
            filled += got
            let used = buffer.withUnsafeBufferPointer { bytes in
                demuxer.demux(UnsafeBufferPointer(rebasing: bytes[..<filled]), at: offset, isFinal: atEnd, emit: emit)
            }
            buffer.withUnsafeMutableBufferPointer { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + used, filled - used)
            }
            filled -= used
            offset += Int64(used)
            progress(offset)
        }
        demuxer.flush(emit: emit)
        if let failure { throw failure }
    }
}
