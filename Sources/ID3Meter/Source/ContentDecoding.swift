import CID3MeterShim

/// A body's `Content-Encoding` undone as it arrives, in pieces of at most `pieceSize` bytes, so
/// that the byte limit the caller counts applies to what the body decodes to: a decompression
/// bomb stops at the limit, a piece past it never made.
package final class ContentDecoding {
    /// The encodings asked for (`Accept-Encoding`) where a body may come compressed: what zlib decodes.
    static let accepted = "gzip, deflate"

    /// At most this many decoded bytes are made before the caller sees them.
    package static let pieceSize = 64 << 10

    private let inflater: OpaquePointer
    private var output = [UInt8](repeating: 0, count: pieceSize)

    /// A decoder for `encoding` (the header's value); `nil` for identity (nothing to undo).
    /// Throws for an encoding zlib does not read (br, zstd: never asked for).
    package init?(encoding: String?) throws(FetchError) {
        let codings = (encoding ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && $0 != "identity" }
        guard !codings.isEmpty else { return nil }
        guard codings.count == 1, ["gzip", "x-gzip", "deflate"].contains(codings[0]) else {
            throw .encoding(encoding ?? "")
        }
        guard let inflater = idm_inflater_new() else { throw .encoding(encoding ?? "") }
        self.inflater = inflater
    }

    deinit { idm_inflater_free(inflater) }

    /// Decodes `input`, handing each decoded piece to `consume`.
    package func decode(_ input: UnsafeRawBufferPointer, consume: (UnsafeBufferPointer<UInt8>) throws(FetchError) -> Void) throws(FetchError) {
        guard var next = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var left = input.count
        while true {
            var consumed = 0, produced = 0
            let result = output.withUnsafeMutableBufferPointer { out in
                idm_inflater_run(inflater, next, left, &consumed, out.baseAddress, out.count, &produced)
            }
            guard result >= 0 else { throw .encoding(nil) }
            next += consumed
            left -= consumed
            if produced > 0 {
                try output.withUnsafeBufferPointer { out throws(FetchError) in try consume(UnsafeBufferPointer(rebasing: out[..<produced])) }
            }
            // Done with this piece of input once all of it is taken and zlib had room to spare.
            if left == 0, produced < output.count { return }
            if consumed == 0, produced == 0 { return }
        }
    }
}
