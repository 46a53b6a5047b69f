import Foundation

/// One output line: a Nielsen tag, another ID3 frame (`--all`), or a packet that did not decode.
/// Field names are the JSONL keys and CSV columns.
package struct TagRecord: Encodable, Sendable {
    package enum Kind: String, Encodable, Sendable { case nielsen, frame, malformed }

    package var type: Kind
    package var source: String
    package var segment: String?
    package var mediaSequence: Int?
    package var discontinuitySequence: Int?
    /// 90 kHz ticks as carried in the stream.
    package var pts: Int64?
    /// `pts` in seconds.
    package var time: Double?
    package var programDateTime: String?
    package var payload: String?
    package var pcCID: String?
    package var fdCID: String?
    package var pcOffset: String?
    package var fdOffset: String?
    package var breakout: String?
    package var valid: Bool?
    package var placeholderPCCID: Bool?
    package var issues: [String]?
    package var frame: String?
    package var owner: String?
    package var size: Int?
    package var id3Version: String?
    package var reason: String?
    package var notes: [String]?

    enum CodingKeys: String, CodingKey {
        case type, source, segment, mediaSequence = "media_sequence", discontinuitySequence = "discontinuity_sequence"
        case pts, time, programDateTime = "program_date_time", payload, pcCID = "pc_cid", fdCID = "fd_cid"
        case pcOffset = "pc_offset", fdOffset = "fd_offset", breakout, valid, placeholderPCCID = "placeholder_pc_cid"
        case issues, frame, owner, size, id3Version = "id3_version", reason, notes
    }

    private init(type: Kind, origin: TagOrigin, pts: Int64?) {
        self.type = type
        source = origin.source
        segment = origin.segment?.uri
        mediaSequence = origin.segment?.mediaSequence
        discontinuitySequence = origin.segment?.discontinuitySequence
        self.pts = pts
        time = pts.map(PTS.seconds)
    }

    /// The records for a scan event, handed to `each` in order: one per Nielsen tag, and with
    /// `allFrames` one per other frame. (Handed over, not returned: an array of them cost a copy
    /// of each record, and a scan makes one a tag.)
    package static func records(for event: MediaEvent, allFrames: Bool, _ each: (TagRecord) -> Void) {
        switch event {
        case .opened, .failure, .warning, .segment, .resumed:
            return
        case .malformed(let error, let pts, let origin):
            var record = TagRecord(type: .malformed, origin: origin, pts: pts)
            record.reason = error.description
            each(record)
        case .tag(let timed):
            let date = timed.programDateTime.map(ProgramDateTime.format)
            for frame in timed.tag.frames {
                var record: TagRecord
                if case .priv(let owner, _) = frame.content, let nielsen = timed.nielsenTags.first(where: { $0.payload == owner }) {
                    record = TagRecord(type: .nielsen, origin: timed.origin, pts: timed.pts)
                    record.describe(nielsen)
                } else if allFrames {
                    record = TagRecord(type: .frame, origin: timed.origin, pts: timed.pts)
                    record.frame = frame.id
                    record.size = frame.size
                    record.owner = frame.label
                } else {
                    continue
                }
                record.programDateTime = date
                record.id3Version = timed.tag.version.description
                // A frame that could not be decoded says why in its own record, not in its neighbours'.
                var notes = timed.tag.notes
                if case .skipped(let reason) = frame.content {
                    record.reason = reason
                    notes.append("frame \(frame.id) \(reason), not decoded")
                }
                record.notes = notes.isEmpty ? nil : notes
                each(record)
            }
        }
    }

    /// Filled in place: a delegating initialiser copied the whole record (a scan makes one a tag).
    private mutating func describe(_ nielsen: NielsenTag) {
        payload = nielsen.payload
        pcCID = nielsen.pcCID
        fdCID = nielsen.fdCID
        pcOffset = nielsen.pcOffset
        fdOffset = nielsen.fdOffset
        breakout = nielsen.breakout
        valid = nielsen.isValid
        placeholderPCCID = nielsen.hasPlaceholderPCCID
        issues = nielsen.isValid ? [] : nielsen.issues.map(\.description)
    }
}

extension ID3Frame {
    /// What names a frame for a person: a PRIV's owner, a TXXX's description, a text frame's text
    /// (an undecoded frame has none: its `reason` says why).
    var label: String? {
        switch content {
        case .priv(let owner, _): owner
        case .userText(let description, _): description
        case .text(let values): values.joined(separator: "/")
        case .skipped, .other: nil
        }
    }
}

extension TagRecord {
    /// Appends the record as one JSON line (no line break) to `output`: the bytes `JSONEncoder`
    /// with sorted keys writes, written directly (`JSONLine`). The keys are listed here in their
    /// sorted order.
    package func appendJSON(to output: inout [UInt8]) {
        JSONLine.write(appendingTo: &output) { line in
            line.add("breakout", breakout)
            line.add("discontinuity_sequence", discontinuitySequence)
            line.add("fd_cid", fdCID)
            line.add("fd_offset", fdOffset)
            line.add("frame", frame)
            line.add("id3_version", id3Version)
            line.add("issues", issues)
            line.add("media_sequence", mediaSequence)
            line.add("notes", notes)
            line.add("owner", owner)
            line.add("payload", payload)
            line.add("pc_cid", pcCID)
            line.add("pc_offset", pcOffset)
            line.add("placeholder_pc_cid", placeholderPCCID)
            line.add("program_date_time", programDateTime)
            line.add("pts", pts)
            line.add("reason", reason)
            line.add("segment", segment)
            line.add("size", size)
            line.add("source", source)
            line.add("time", time)
            line.add("type", type.rawValue)
            line.add("valid", valid)
        }
    }
}
