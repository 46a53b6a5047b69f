/// Feeds a stream libavformat reads through a `TransportStreamExtractor` as its bytes arrive, in one reused buffer.
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
            throw InputFailure(source: url, .cannotOpen(error))
        }
        if prefix.isEmpty { throw InputFailure(source: url, .empty) }
        guard MediaForm.sniff(prefix) == .transportStream else {
            throw InputFailure(source: url, .notTransportStream)
        }
        return (stream, prefix)
    }

    /// Reads to the end, or to a read error, which is thrown once what came before is read.
    /// `prefix` is bytes already taken from the stream's front (a probe), read first.
    static func read(_ stream: ByteStream, prefix: [UInt8] = [], into extractor: inout TransportStreamExtractor,
                     progress: (Int64) -> Void = { _ in }, emit: (MediaEvent) -> Void) throws(FetchError) {
        extractor.feed(prefix, emit: emit)
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var offset = Int64(prefix.count)
        var failure: FetchError?
        while true {
            let got: Int
            do {
                got = try buffer.withUnsafeMutableBufferPointer { bytes throws(FetchError) in try stream.read(into: bytes) }
            } catch {
                failure = error   // what came before is still read
                break
            }
            if got == 0 { break }
            buffer.withUnsafeBufferPointer { extractor.feed(UnsafeBufferPointer(rebasing: $0[..<got]), emit: emit) }
            offset += Int64(got)
            progress(offset)
        }
        extractor.finish(emit: emit)
        if let failure { throw failure }
    }
}
