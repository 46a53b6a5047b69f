/// Counts over a scan, for the closing lines a person reads.
package struct ScanSummary: Sendable {
    package var inputs = 0
    package var id3Tags = 0
    package var nielsenTags = 0
    package var validNielsenTags = 0
    package var placeholderTags = 0
    package var malformedPackets = 0
    /// Failures and warnings, each already shown as it came.
    package var failures = 0
    package var warnings = 0

    package init() {}

    package mutating func count(_ event: MediaEvent) {
        switch event {
        case .tag(let timed):
            id3Tags += 1
            for nielsen in timed.nielsenTags {
                nielsenTags += 1
                if nielsen.isValid { validNielsenTags += 1 }
                if nielsen.hasPlaceholderPCCID { placeholderTags += 1 }
            }
        case .opened, .segment, .resumed, .mediaTime: break
        case .malformed: malformedPackets += 1
        case .failure: failures += 1
        case .warning: warnings += 1
        }
    }

    package mutating func merge(_ other: ScanSummary) {
        inputs += other.inputs
        id3Tags += other.id3Tags
        nielsenTags += other.nielsenTags
        validNielsenTags += other.validNielsenTags
        placeholderTags += other.placeholderTags
        malformedPackets += other.malformedPackets
        failures += other.failures
        warnings += other.warnings
    }

    package var lines: [String] {
        var lines = ["\(inputs) input\(inputs == 1 ? "" : "s"): \(nielsenTags) Nielsen tags (\(validNielsenTags) valid, "
                     + "\(nielsenTags - validNielsenTags) invalid, \(placeholderTags) with placeholder PC CID) "
                     + "in \(id3Tags) ID3 tags; \(malformedPackets) malformed ID3 packets"]
        if failures > 0 || warnings > 0 {
            lines.append("\(failures) failure\(failures == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s") (shown above)")
        }
        return lines
    }
}
