import CID3MeterShim

/// Fetches a segment's bytes as they arrive and undoes AES-128 (RFC 8216 §5.2), caching keys
/// and initialisation sections (`EXT-X-MAP`) by URI. Every reference is checked against
/// `ReferenceRule` first, from the playlist that made it.
/// The caches make it a value each reader owns: one per playlist being read.
package struct SegmentLoader: Sendable {
    private let fetcher: Fetcher
    /// The media playlist the segments come from, and its target duration (for deadlines).
    private let playlist: String
    private let targetDuration: Double?
    private var keys: [String: [UInt8]] = [:]
    private var initSegments: [String: [UInt8]] = [:]

    init(fetcher: Fetcher, playlist: String, targetDuration: Double?) {
        self.fetcher = fetcher
        self.playlist = playlist
        self.targetDuration = targetDuration
    }

    /// Hands the segment's plaintext to `consume` as it arrives. After a failed attempt the
    /// segment is read again from the start: `restart` is called first.
    mutating func load(_ segment: Segment, retrying: Bool = true, restart: () -> Void,
                       consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(SegmentLoadError) {
        if let refusal = ReferenceRule.refusal(of: segment.uri, from: playlist) { throw .refused(refusal, .segment) }
        var key: SegmentDecryptor?
        if let declared = segment.key {
            key = SegmentDecryptor(key: try await self.key(at: declared.uri), iv: declared.iv ?? Self.sequenceIV(segment.mediaSequence))
        }
        var decryptor = key
        do throws(FetchFailure) {
            try await fetcher.read(segment.uri, range: segment.byteRange, as: .segment, targetDuration: targetDuration, retrying: retrying, restart: {
                decryptor = key
                restart()
            }) { chunk in
                guard var running = decryptor else { return consume(chunk) }
                running.decrypt(chunk).withUnsafeBufferPointer(consume)
                decryptor = running
            }
        } catch {
            throw .fetch(error, .segment)
        }
        guard var running = decryptor else { return }
        guard let last = running.finish() else {
            throw .decryptionFailed
        }
        last.withUnsafeBufferPointer(consume)
    }

    /// The initialisation section at `uri` (its `range`, when given), fetched once.
    mutating func initSegment(at uri: String, range: ByteRange? = nil, retrying: Bool = true) async throws(SegmentLoadError) -> [UInt8] {
        let key = range.map { "\(uri) \($0)" } ?? uri
        if let bytes = initSegments[key] { return bytes }
        if let refusal = ReferenceRule.refusal(of: uri, from: playlist) { throw .refused(refusal, .initSection(uri)) }
        let bytes: [UInt8]
        do throws(FetchFailure) { bytes = try await fetcher.fetch(uri, range: range, as: .initSection, targetDuration: targetDuration, retrying: retrying) } catch {
            throw .fetch(error, .initSection(uri))
        }
        initSegments[key] = bytes
        return bytes
    }

    private mutating func key(at uri: String) async throws(SegmentLoadError) -> [UInt8] {
        if let key = keys[uri] { return key }
        if let refusal = ReferenceRule.refusal(of: uri, from: playlist) { throw .refused(refusal, .key(uri)) }
        let key: [UInt8]
        do throws(FetchFailure) { key = try await fetcher.fetch(uri, as: .key, targetDuration: targetDuration) } catch {
            throw .fetch(error, .key(uri))
        }
        guard key.count == 16 else {
            throw .keySize(uri, bytes: key.count)
        }
        keys[uri] = key
        return key
    }

    /// Without an IV attribute, the IV is the media sequence number as a 128-bit big-endian integer.
    package static func sequenceIV(_ sequence: Int) -> [UInt8] {
        [UInt8](repeating: 0, count: 8) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(sequence) >> ($0 * 8)) }
    }
}
