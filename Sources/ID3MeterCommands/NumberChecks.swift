import ArgumentParser

/// Every number from the command line is checked before use: finite and in its range, with
/// the range in the message. (`nan`, `inf` and `1e300` parse as numbers; none may reach a
/// clock, a timer or an allocation.)
enum NumberCheck {
    static func check(_ value: Double?, _ option: String, in range: ClosedRange<Double>, unit: String = "") throws {
        guard let value else { return }
        let bounds = "from \(format(range.lowerBound)) to \(format(range.upperBound))\(unit)"
        guard value.isFinite else { throw ValidationError("\(option) must be a finite number \(bounds), not \(value)") }
        guard value > 0 || range.lowerBound <= 0 else { throw ValidationError("\(option) must be positive (\(bounds)), not \(format(value))") }
        guard range.contains(value) else { throw ValidationError("\(option) must be \(bounds), not \(format(value))") }
    }

    static func check(_ value: Int?, _ option: String, in range: ClosedRange<Int>) throws {
        guard let value, !range.contains(value) else { return }
        throw ValidationError("\(option) must be from \(range.lowerBound) to \(range.upperBound), not \(value)")
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A size in bytes, written with an optional K, M or G (powers of 1024): `256M`, `64K`, `1048576`.
struct ByteSize: ExpressibleByArgument, CustomStringConvertible {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var text = Substring(argument.uppercased())
        if text.hasSuffix("B") { text = text.dropLast() }
        let unit = text.last.flatMap { units[$0] }
        if unit != nil { text = text.dropLast() }
        guard let count = Int(text), count > 0 else { return nil }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: unit ?? 1)
        guard !overflow else { return nil }
        self.bytes = bytes
    }

    /// As it would be written on the command line (for the defaults in `--help`).
    var description: String {
        bytes % (1 << 30) == 0 ? "\(bytes >> 30)G" : bytes % (1 << 20) == 0 ? "\(bytes >> 20)M"
            : bytes % (1 << 10) == 0 ? "\(bytes >> 10)K" : "\(bytes)"
    }
}
