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

    /// The reading the spec prescribes; `nil` when the extended header the flags announce does not fit.
    static func spec(_ body: [UInt8], version: ID3Tag.Version, flags: UInt8) -> TagReading? {
        guard case .success(let start) = ID3TagParser.extendedHeaderLength(body, version: version, flags: flags) else { return nil }
        return TagReading(body: body, start: start, layout: .standard(for: version),
                          unsynchronisedFrames: isUnsynchronisedPerFrame(version: version, flags: flags), notes: [])
    }

    /// The spec's reading, then (when `tolerant`) the ones writers get wrong, in that order.
    static func candidates(_ body: [UInt8], version: ID3Tag.Version, flags: UInt8, tolerant: Bool) -> [TagReading] {
        let spec = spec(body, version: version, flags: flags)
        guard tolerant else { return spec.map { [$0] } ?? [] }
        var starts: [(Int, [String])] = spec.map { [($0.start, [])] } ?? []
        let unsynchronised = isUnsynchronisedPerFrame(version: version, flags: flags)
        let standard = FrameLayout.standard(for: version)
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

    private static func isUnsynchronisedPerFrame(version: ID3Tag.Version, flags: UInt8) -> Bool {
        version == .v2_4 && flags & ID3TagParser.unsynchronisationFlag != 0
    }
}
