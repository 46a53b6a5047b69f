/// One way to read a tag's body: where its frames start, how their sizes are written, and
/// whether unsynchronisation is undone per frame or was undone for the whole body. The same
/// bytes can be meant several ways by real writers; `candidates` lists them, the spec's first.
struct TagReading {
    var body: [UInt8]
    var start: Int
    var layout: FrameLayout
    /// v2.4: frames are de-unsynchronised one by one (the header flag, as the spec has it).
    var unsynchronisedFrames: Bool
    /// How this reading departs from the spec, for the tag's notes.
    var notes: [String]

    /// The spec's reading, then (when `tolerant`) the ones writers get wrong, in that order.
    static func candidates(_ body: [UInt8], version: ID3Version, flags: UInt8, tolerant: Bool) -> [TagReading] {
        var starts: [(Int, [String])] = []
        switch ID3TagParser.extendedHeaderLength(body, version: version, flags: flags) {
        case .success(let length): starts.append((length, []))
        case .failure: break
        }
        let unsynchronised = version == .v2_4 && flags & ID3TagParser.unsynchronisationFlag != 0
        let standard = FrameLayout.standard(for: version)
        guard tolerant else {
            return starts.map { TagReading(body: body, start: $0.0, layout: standard, unsynchronisedFrames: unsynchronised, notes: []) }
        }
        if version != .v2_2, flags & ID3TagParser.extendedHeaderFlag != 0 {
            starts.append((0, ["extended-header flag set but no extended header: frames read from byte 10"]))
        }
        var layouts: [(FrameLayout, [String])] = [(standard, [])]
        switch version {
        case .v2_4: layouts.append((FrameLayout(version: .v2_4, syncSafeSizes: false), ["ID3v2.4 tag written with plain (not sync-safe) frame sizes"]))
        case .v2_3: layouts.append((FrameLayout(version: .v2_3, syncSafeSizes: true), ["ID3v2.3 tag written with sync-safe frame sizes"]))
        case .v2_2: break
        }
        // v2.4 says the header flag means every frame is unsynchronised on its own; some writers
        // unsynchronise the whole tag as v2.3 does, frame sizes counted before.
        var bodies: [([UInt8], Bool, [String])] = [(body, unsynchronised, [])]
        if unsynchronised {
            bodies.append((removeUnsynchronisation(body), false, ["ID3v2.4 tag unsynchronised as a whole, the ID3v2.3 way"]))
        }
        var readings: [TagReading] = []
        for (bytes, perFrame, bodyNotes) in bodies {
            for (start, startNotes) in starts {
                for (layout, layoutNotes) in layouts {
                    readings.append(TagReading(body: bytes, start: start, layout: layout, unsynchronisedFrames: perFrame,
                                               notes: bodyNotes + startNotes + layoutNotes))
                }
            }
        }
        return readings
    }
}
