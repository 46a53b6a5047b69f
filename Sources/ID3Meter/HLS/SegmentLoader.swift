import CID3MeterShim

/// Why a segment's bytes could not be had.
public struct SegmentLoadError: Error, Sendable {
    public var reason: String
}

/// Fetches a segment's bytes and undoes AES-128 (RFC 8216 §5.2), caching keys and
/// initialisation segments (`EXT-X-MAP`) by URI.
///
/// Not thread-safe (the key cache): Sendable only so that a `BlockingExecutor`, which runs one
/// call at a time, can own it.
public final class SegmentLoader: @unchecked Sendable {
    private let fetcher: Fetcher
    private var keys: [String: [UInt8]] = [:]
    private var initSegments: [String: [UInt8]] = [:]

    public init(fetcher: Fetcher) { self.fetcher = fetcher }

    public func load(_ segment: Segment) throws(SegmentLoadError) -> [UInt8] {
        let fail = SegmentLoadError.init(reason:)
        if segment.byteRange != nil { throw fail("EXT-X-BYTERANGE segments are not supported yet") }
        var bytes: [UInt8]
        do { bytes = try fetcher.fetchRetrying(segment.uri) } catch { throw fail("cannot fetch: \(error)") }
        guard let key = segment.key else { return bytes }
        let keyBytes = try self.key(at: key.uri, for: segment)
        var iv = key.iv ?? Self.sequenceIV(segment.mediaSequence)
        guard !bytes.isEmpty, bytes.count % 16 == 0,
              idm_aes128_cbc(&bytes, bytes.count, keyBytes, &iv, 1) == 0,
              let padding = bytes.last, (1...16).contains(padding), Int(padding) <= bytes.count,
              bytes.suffix(Int(padding)).allSatisfy({ $0 == padding }) else {
            throw fail("AES-128 decryption failed (wrong key or IV, or the segment is not encrypted)")
        }
        bytes.removeLast(Int(padding))
        return bytes
    }

    /// The initialisation segment at `uri`, fetched once.
    public func initSegment(at uri: String) throws(SegmentLoadError) -> [UInt8] {
        if let bytes = initSegments[uri] { return bytes }
        let bytes: [UInt8]
        do { bytes = try fetcher.fetchRetrying(uri) } catch {
            throw SegmentLoadError(reason: "cannot fetch its initialisation segment \(uri): \(error)")
        }
        initSegments[uri] = bytes
        return bytes
    }

    private func key(at uri: String, for segment: Segment) throws(SegmentLoadError) -> [UInt8] {
        if let key = keys[uri] { return key }
        let key: [UInt8]
        do { key = try fetcher.fetchRetrying(uri) } catch {
            throw SegmentLoadError(reason: "cannot fetch its AES-128 key \(uri): \(error)")
        }
        guard key.count == 16 else {
            throw SegmentLoadError(reason: "AES-128 key \(uri) is \(key.count) bytes, expected 16")
        }
        keys[uri] = key
        return key
    }

    /// Without an IV attribute, the IV is the media sequence number as a 128-bit big-endian integer.
    public static func sequenceIV(_ sequence: Int) -> [UInt8] {
        [UInt8](repeating: 0, count: 8) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(sequence) >> ($0 * 8)) }
    }
}
