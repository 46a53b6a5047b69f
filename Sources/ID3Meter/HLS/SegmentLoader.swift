import CID3MeterShim

/// Why a playlist, or a segment's bytes, could not be had: `reason` in words, `cause` as a
/// value to match on.
public struct SegmentLoadError: Error, Sendable {
    /// What kind of failure it was, with the value that says more.
    public enum Cause: Sendable {
        /// The fetch failed: its `FetchError` says how (HTTP status, connection, limit, ...).
        case fetch(FetchFailure)
        case playlist(PlaylistError)
        /// `ReferenceRule` refused the reference.
        case refused
        /// The bytes or the playlist were there but not usable (a key of the wrong size, a
        /// failed decryption, a master playlist where a media one was due).
        case unusable
    }

    public var reason: String
    public var cause: Cause

    init(reason: String, cause: Cause = .unusable) {
        self.reason = reason
        self.cause = cause
    }
}

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
    mutating func load(_ segment: Segment, restart: () -> Void,
                       consume: (UnsafeBufferPointer<UInt8>) -> Void) async throws(SegmentLoadError) {
        if let refusal = ReferenceRule.refusal(of: segment.uri, from: playlist) { throw SegmentLoadError(reason: refusal, cause: .refused) }
        var key: SegmentDecryptor?
        if let declared = segment.key {
            key = SegmentDecryptor(key: try await self.key(at: declared.uri), iv: declared.iv ?? Self.sequenceIV(segment.mediaSequence))
        }
        var decryptor = key
        do throws(FetchFailure) {
            try await fetcher.read(segment.uri, range: segment.byteRange, as: .segment, targetDuration: targetDuration, restart: {
                decryptor = key
                restart()
            }) { chunk in
                guard var running = decryptor else { return consume(chunk) }
                running.decrypt(chunk).withUnsafeBufferPointer(consume)
                decryptor = running
            }
        } catch {
            throw SegmentLoadError(reason: "cannot fetch: \(error)", cause: .fetch(error))
        }
        guard var running = decryptor else { return }
        guard let last = running.finish() else {
            throw SegmentLoadError(reason: "AES-128 decryption failed (wrong key or IV, or the segment is not encrypted)")
        }
        last.withUnsafeBufferPointer(consume)
    }

    /// The initialisation section at `uri` (its `range`, when given), fetched once.
    mutating func initSegment(at uri: String, range: ByteRange? = nil) async throws(SegmentLoadError) -> [UInt8] {
        let key = range.map { "\(uri) \($0)" } ?? uri
        if let bytes = initSegments[key] { return bytes }
        if let refusal = ReferenceRule.refusal(of: uri, from: playlist) { throw SegmentLoadError(reason: refusal, cause: .refused) }
        let bytes: [UInt8]
        do throws(FetchFailure) { bytes = try await fetcher.fetch(uri, range: range, as: .initSection, targetDuration: targetDuration) } catch {
            throw SegmentLoadError(reason: "cannot fetch its initialisation segment \(uri): \(error)", cause: .fetch(error))
        }
        initSegments[key] = bytes
        return bytes
    }

    private mutating func key(at uri: String) async throws(SegmentLoadError) -> [UInt8] {
        if let key = keys[uri] { return key }
        if let refusal = ReferenceRule.refusal(of: uri, from: playlist) { throw SegmentLoadError(reason: "AES-128 key \(refusal)", cause: .refused) }
        let key: [UInt8]
        do throws(FetchFailure) { key = try await fetcher.fetch(uri, as: .key, targetDuration: targetDuration) } catch {
            throw SegmentLoadError(reason: "cannot fetch its AES-128 key \(uri): \(error)", cause: .fetch(error))
        }
        guard key.count == 16 else {
            throw SegmentLoadError(reason: "AES-128 key \(uri) is \(key.count) bytes, expected 16")
        }
        keys[uri] = key
        return key
    }

    /// Without an IV attribute, the IV is the media sequence number as a 128-bit big-endian integer.
    package static func sequenceIV(_ sequence: Int) -> [UInt8] {
        [UInt8](repeating: 0, count: 8) + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(sequence) >> ($0 * 8)) }
    }
}
