/// A `CoverageHour` as the collector stores it: one line of ASCII, the same in SQLite and
/// PostgreSQL, read back at a few microseconds an hour (a month's report at 10,000 channels reads
/// 7.2 million; JSON would take a minute on its own). Numbers are written as Swift writes them,
/// which reads them back exactly; meter names, which may hold any character, go with their
/// length in UTF-8 bytes.
///
///     1 <credited> <creditable> <info> <placeholder> <invalid> <stretches> (<from> <to>)...
///       (- | <first> <last> <longest> <over>) <meters> (<bytes>:<name> <credited> <creditable>)...
extension CoverageHour {
    package var text: String {
        var words = ["1", String(credited), String(tags.creditable), String(tags.info), String(tags.placeholder), String(tags.invalid),
                     String(covered.count)]
        for stretch in covered { words += [stretch.lowerBound.description, stretch.upperBound.description] }
        if let info {
            words += [info.first.description, info.last.description, info.longest.description, String(info.overLimit)]
        } else {
            words.append("-")
        }
        words.append(String(meters.count))
        for part in meters {
            words += ["\(part.meter.utf8.count):\(part.meter)", String(part.credited), String(part.creditable)]
        }
        return words.joined(separator: " ")
    }

    /// The hour `text` (as `text` wrote it) says, or `nil` when it is not one.
    package init?(hour: Int, text: String) {
        self.init(hour: hour, bytes: Array(text.utf8)[...])
    }

    /// Lines of `<hour> <text>` (the collector's stored hours as one text), by hour; `nil` when
    /// a line is not one.
    package static func lines(_ text: String) -> [Int: CoverageHour]? {
        let bytes = Array(text.utf8)
        var hours: [Int: CoverageHour] = [:]
        hours.reserveCapacity(bytes.count / 100)
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            var reader = Reader(bytes: bytes[start..<end])
            guard let hour = reader.number(Int.self), let folded = CoverageHour(hour: hour, bytes: bytes[reader.at..<end]) else { return nil }
            hours[hour] = folded
            start = end + 1
        }
        return hours
    }

    private init?(hour: Int, bytes: ArraySlice<UInt8>) {
        var reader = Reader(bytes: bytes)
        guard reader.word() == "1", let credited = reader.number(UInt64.self), let creditable = reader.number(Int.self),
              let info = reader.number(Int.self), let placeholder = reader.number(Int.self), let invalid = reader.number(Int.self),
              let stretches = reader.number(Int.self), stretches >= 0, stretches <= 200 else { return nil }
        self.init(hour: hour)
        self.credited = credited
        tags = ChannelDay.TagCounts(creditable: creditable, info: info, placeholder: placeholder, invalid: invalid)
        for _ in 0..<stretches {
            guard let from = reader.number(Double.self), let to = reader.number(Double.self), from <= to else { return nil }
            covered.append(from...to)
        }
        if reader.peek == UInt8(ascii: "-") {
            guard reader.word() == "-" else { return nil }
        } else {
            guard let first = reader.number(Double.self), let last = reader.number(Double.self), let longest = reader.number(Double.self),
                  let over = reader.number(Int.self) else { return nil }
            self.info = InfoStretch(first: first, last: last, longest: longest, overLimit: over)
        }
        guard let count = reader.number(Int.self), count >= 0 else { return nil }
        for _ in 0..<count {
            guard let name = reader.name(), let credited = reader.number(UInt64.self), let creditable = reader.number(Int.self) else { return nil }
            meters.append(MeterHour(meter: name, credited: credited, creditable: creditable))
        }
        // In the order of their names, each once, as a fold leaves them.
        guard zip(meters, meters.dropFirst()).allSatisfy({ $0.meter < $1.meter }) else { return nil }
        guard reader.atEnd else { return nil }
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var at: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            at = bytes.startIndex
        }

        var atEnd: Bool { at >= bytes.endIndex }
        var peek: UInt8? { at < bytes.endIndex ? bytes[at] : nil }

        /// The next word, and the space after it.
        mutating func word() -> String? {
            guard !atEnd else { return nil }
            let start = at
            while at < bytes.endIndex, bytes[at] != UInt8(ascii: " ") { at += 1 }
            let word = String(decoding: bytes[start..<at], as: UTF8.self)
            if at < bytes.endIndex { at += 1 }
            return word
        }

        mutating func number(_: Double.Type) -> Double? { word().flatMap(Double.init) }

        /// A whole number's digits (a `-` first for a negative one), read as `T` reads them;
        /// `nil` for anything else, or one `T` cannot hold. Read from the bytes: the words of a
        /// month's hours are tens of millions.
        mutating func number<T: FixedWidthInteger>(_: T.Type) -> T? {
            let negative = peek == UInt8(ascii: "-")
            if negative { at += 1 }
            var value: T = 0
            var digits = 0
            while at < bytes.endIndex, bytes[at] != UInt8(ascii: " ") {
                let digit = bytes[at] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (next, carry) = negative ? times.subtractingReportingOverflow(T(digit)) : times.addingReportingOverflow(T(digit))
                guard !overflow, !carry else { return nil }
                value = next
                digits += 1
                at += 1
            }
            guard digits > 0 else { return nil }
            if at < bytes.endIndex { at += 1 }
            return value
        }

        /// `<bytes>:<name>` and the space after it.
        mutating func name() -> String? {
            let start = at
            while at < bytes.endIndex, bytes[at] != UInt8(ascii: ":") { at += 1 }
            guard at < bytes.endIndex, let length = Int(String(decoding: bytes[start..<at], as: UTF8.self)), length >= 0,
                  length <= bytes.endIndex - at - 1 else { return nil }
            let name = String(decoding: bytes[(at + 1)..<(at + 1 + length)], as: UTF8.self)
            at += 1 + length
            guard atEnd || bytes[at] == UInt8(ascii: " ") else { return nil }
            if !atEnd { at += 1 }
            return name
        }
    }
}
