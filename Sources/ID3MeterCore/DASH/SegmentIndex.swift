/// A segment index, `sidx` (ISO/IEC 14496-12 §8.16.3), as a `SegmentBase@indexRange` points at
/// it: the subsegments of one resource, each a byte range with its duration. That is how a
/// single-file Representation is read a subsegment at a time, as players do.
package enum SegmentIndex {
    /// More references than a day of 1-second subsegments is no index to follow.
    package static let maximumReferences = 100_000

    package struct Reference: Sendable, Equatable {
        package var range: ByteRange
        /// In the index's timescale, on the media timeline.
        package var time: Int
        package var duration: Int
        /// The range is another `sidx` (a hierarchical index), not media.
        package var isIndex = false
    }

    package struct Index: Sendable, Equatable {
        package var timescale: Int
        package var references: [Reference]
    }

    /// How much of a resource's start is read to find its index when nothing says where it is
    /// (a `SegmentTemplate@index`): the movie header and the `sidx` after it, as packagers lay
    /// out one file per Representation.
    package static let searchLength = 64 << 10

    /// The largest `sidx` there can be: 65,535 references of 12 bytes and its header.
    static let maximumSize = 64 + 65_535 * 12

    /// Where the first `sidx` is among the top-level boxes whose headers are in `prefix` (a
    /// resource's first bytes); `nil` when none of them is one, or it is larger than one can be.
    package static func locate(in prefix: [UInt8]) -> ByteRange? {
        var offset = 0
        while let header = Box.Header(prefix, at: offset), let size = header.size, size >= header.length {
            if header.type == "sidx" { return size <= maximumSize ? ByteRange(offset: offset, length: size) : nil }
            let (next, overflowed) = offset.addingReportingOverflow(size)
            guard !overflowed else { return nil }
            offset = next
        }
        return nil
    }

    /// The index in `bytes`, which were read from `offset` of the resource (the first box in
    /// them that is a `sidx`); `nil` when there is none, or it is malformed.
    package static func parse(_ bytes: [UInt8], offset: Int) -> Index? {
        guard let box = Box.children(of: bytes).first(where: { $0.type == "sidx" }),
              case (let version, var reader)? = box.fullBoxFields(in: bytes),
              reader.skip(4), let timescale = reader.readInt(4), timescale > 0,
              let earliest = reader.readInt(version == 0 ? 4 : 8), let firstOffset = reader.readInt(version == 0 ? 4 : 8),
              reader.skip(2), let count = reader.readInt(2), count <= maximumReferences else { return nil }
        // The first subsegment starts `first_offset` bytes after the end of the sidx box.
        var (start, overflowed) = offset.addingReportingOverflow(box.content.upperBound)
        (start, overflowed) = overflowed ? (0, true) : start.addingReportingOverflow(firstOffset)
        guard !overflowed, earliest < 1 << 53 else { return nil }
        var time = earliest
        var references: [Reference] = []
        for _ in 0..<count {
            guard let typeAndSize = reader.readInt(4), let duration = reader.readInt(4), reader.skip(4) else { return nil }
            let size = typeAndSize & 0x7FFF_FFFF
            // Type 1: the range is an index of its own (a hierarchical sidx), which the reader fetches.
            references.append(Reference(range: ByteRange(offset: start, length: size), time: time, duration: duration,
                                        isIndex: typeAndSize & 0x8000_0000 != 0))
            start += size
            time += duration
        }
        return Index(timescale: timescale, references: references)
    }
}
