/// Reads one carrier's ID3 tags from its bytes as they arrive, holding only what the next
/// step needs (a tag, a frame header, a box): any chunking gives the same events, and memory
/// does not grow with the input's size.
protocol ChunkedReader {
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (ScanEvent) -> Void)
    /// The end of the input: what is still held is read as it is.
    mutating func finish(emit: (ScanEvent) -> Void)
}
