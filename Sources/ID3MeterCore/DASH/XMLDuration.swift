import FoundationEssentials

/// `xs:duration` as an MPD writes its times (`PT4S`, `PT1H2M3.5S`, `P1DT2H`), in seconds.
/// Years and months have no fixed length and no MPD uses them for a time: they are refused,
/// as are negative, non-finite and absurd values (over 100 years).
package enum XMLDuration {
    package static let maximumSeconds = 100 * 365.25 * 86_400

    package static func seconds(_ text: String) -> Double? {
        var rest = text.trimmingWhitespace
        guard rest.first == "P" else { return nil }
        rest = rest.dropFirst()
        var total = 0.0
        var inTime = false
        var any = false
        var number = ""
        var lastUnit: Character?
        let dateUnits: [Character: Double] = ["D": 86_400, "W": 604_800]
        let timeUnits: [Character: Double] = ["H": 3_600, "M": 60, "S": 1]
        for character in rest {
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                lastUnit = nil
                continue
            }
            if character.isASCII, character.isNumber || character == "." {
                number.append(character)
                continue
            }
            guard !number.isEmpty, let value = Double(number), value.isFinite else { return nil }
            guard let unit = (inTime ? timeUnits : dateUnits)[character], character != lastUnit else { return nil }
            // Only seconds may have a fraction.
            if number.contains("."), character != "S" { return nil }
            total += value * unit
            number = ""
            lastUnit = character
            any = true
        }
        guard any, number.isEmpty, total.isFinite, total <= maximumSeconds else { return nil }
        return total
    }
}
