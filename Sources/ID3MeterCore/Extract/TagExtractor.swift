import FoundationEssentials

/// Reads one carrier's ID3 tags from its bytes as they arrive, as Media3's `Extractor` and
/// hls.js's demuxers do: bytes go in, in pieces of any size, events come out. Any chunking
/// gives the same events, and memory does not grow with the input's size: only what the next
/// step needs (a tag, a frame header, a box, a TS packet) is held.
///
/// `MediaForm.sniff` tells which extractor a input needs; `MediaExtractor` does both.
/// Extractors are values and `Sendable`: one can be handed to another task between pieces.
public protocol TagExtractor: Sendable {
    /// The next bytes of the input, in order; events for whatever they complete are emitted now.
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, emit: (MediaEvent) -> Void)
    /// The end of the input: what is still held is read as it is.
    mutating func finish(emit: (MediaEvent) -> Void)
    /// The presentation time a segment's media starts at, once the bytes told it (an fMP4
    /// segment's first fragment); `nil` where the extractor does not learn it.
    var firstPTS: Int64? { get }
}

extension TagExtractor {
    public var firstPTS: Int64? { nil }
}

extension TagExtractor {
    /// Feeds bytes the caller holds, where they lie: `[UInt8]`, `Data`, an `ArraySlice`, a raw
    /// buffer (a NIO `ByteBuffer`'s readable bytes through `withUnsafeReadableBytes`).
    public mutating func feed(_ bytes: some ContiguousBytes, emit: (MediaEvent) -> Void) {
        bytes.withUnsafeBytes { raw in raw.withMemoryRebound(to: UInt8.self) { feed($0, emit: emit) } }
    }
}

extension TagExtractor {
    /// Reads bytes held whole to their end, fed in pieces cut at the offsets `cuts` (any
    /// chunking reads alike; tests and the fuzzer check it).
    public mutating func extract(_ bytes: [UInt8], cutAt cuts: [Int] = [], emit: (MediaEvent) -> Void) {
        let bounds = [0] + cuts.map { min(max($0, 0), bytes.count) }.sorted() + [bytes.count]
        bytes.withUnsafeBufferPointer { buffer in
            for (start, end) in zip(bounds, bounds.dropFirst()) where start < end {
                feed(UnsafeBufferPointer(rebasing: buffer[start..<end]), emit: emit)
            }
        }
        finish(emit: emit)
    }
}
