/// Counts over a scan, for the closing lines a person reads.
package struct ScanSummary: Sendable {
    package var inputs = 0
    package var id3Tags = 0
    package var nielsen = NielsenCounts()
    package var malformedPackets = 0
    /// Failures and warnings, each already shown as it came.
    package var failures = 0
    package var warnings = 0

    package init() {}

    package mutating func count(_ event: MediaEvent) {
        switch event {
        case .tag(let timed):
            id3Tags += 1
            timed.nielsenTags.forEach { nielsen.add($0) }
        case .opened, .segment, .resumed, .mediaTime: break
        case .malformed: malformedPackets += 1
        case .failure: failures += 1
        case .warning: warnings += 1
        }
    }

    package mutating func merge(_ other: ScanSummary) {
        inputs += other.inputs
        id3Tags += other.id3Tags
        nielsen.add(other.nielsen)
        malformedPackets += other.malformedPackets
        failures += other.failures
        warnings += other.warnings
    }

    package var lines: [String] {
        var lines = ["\(inputs) input\(inputs == 1 ? "" : "s"): \(nielsen.tags) Nielsen tags (\(nielsen.valid) valid, "
                     + "\(nielsen.invalid) invalid, \(nielsen.placeholder) with placeholder PC CID) "
                     + "in \(id3Tags) ID3 tags; \(malformedPackets) malformed ID3 packets"]
        if failures > 0 || warnings > 0 {
            lines.append("\(failures) failure\(failures == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s") (shown above)")
        }
        return lines
    }
}
