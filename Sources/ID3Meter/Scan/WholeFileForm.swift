import Foundation

/// Media read whole rather than streamed: packed audio, or fragmented MP4 (a file with its
/// initialisation and fragments, a lone media segment, or an HLS segment with its EXT-X-MAP).
public enum WholeFileForm: Sendable, CaseIterable {
    case packedAudio
    case fragmentedMP4

    var extensions: [String] {
        switch self {
        case .packedAudio: ["aac", "adts", "mp3", "ac3", "ec3", "eac3"]
        case .fragmentedMP4: ["mp4", "m4s", "m4a", "m4v", "cmfv", "cmfa"]
        }
    }

    static var allExtensions: [String] { allCases.flatMap(\.extensions) }

    /// The form of `location`, by its extension, or for a local file by its first bytes.
    public static func of(_ location: String) -> WholeFileForm? {
        let path = Location.hasScheme(location) ? (URL(string: location)?.path ?? location) : location
        let suffix = (path as NSString).pathExtension.lowercased()
        if let form = allCases.first(where: { $0.extensions.contains(suffix) }) { return form }
        guard !Location.hasScheme(location), let handle = FileHandle(forReadingAtPath: location) else { return nil }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 1_024)) ?? Data())
        return MediaForm.sniff(head)?.wholeFileForm
    }

    /// A reader for this form's bytes; `initSegment` is an fMP4 segment's `EXT-X-MAP`.
    func makeReader(initSegment: [UInt8]? = nil, origin: TagOrigin) -> any ChunkedReader {
        switch self {
        case .packedAudio: PackedAudioReader(origin: origin)
        case .fragmentedMP4: FragmentReader(timescales: initSegment.flatMap(TrackTimescales.init(initSegment:)), origin: origin)
        }
    }

    /// Emits the tags of bytes held whole. Returns whether there was a tag.
    @discardableResult
    public func read(_ bytes: [UInt8], initSegment: [UInt8]? = nil, origin: TagOrigin, emit: (ScanEvent) -> Void) -> Bool {
        read(pieces: [], of: bytes, initSegment: initSegment, origin: origin, emit: emit)
    }

    /// The same, fed to the reader in pieces cut at the offsets `pieces` (any chunking reads alike).
    @discardableResult
    public func read(pieces cuts: [Int], of bytes: [UInt8], initSegment: [UInt8]? = nil, origin: TagOrigin,
                     emit: (ScanEvent) -> Void) -> Bool {
        var found = false
        func note(_ event: ScanEvent) {
            if case .tag = event { found = true }
            emit(event)
        }
        var reader = makeReader(initSegment: initSegment, origin: origin)
        let bounds = [0] + cuts.map { min(max($0, 0), bytes.count) }.sorted() + [bytes.count]
        bytes.withUnsafeBufferPointer { buffer in
            for (start, end) in zip(bounds, bounds.dropFirst()) where start < end {
                reader.feed(UnsafeBufferPointer(rebasing: buffer[start..<end]), emit: note)
            }
        }
        reader.finish(emit: note)
        return found
    }

    var noTagReason: String {
        switch self {
        case .packedAudio: "no ID3 tag in this packed audio"
        case .fragmentedMP4: "no emsg box carrying ID3 in this fragmented MP4"
        }
    }
}
