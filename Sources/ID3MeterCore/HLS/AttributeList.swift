/// An RFC 8216 §4.2 attribute list: `NAME=value` pairs separated by commas, where a
/// quoted-string value may itself hold commas.
struct AttributeList {
    private(set) var values: [String: String] = [:]

    init(_ text: Substring) {
        var name = ""
        var value = ""
        var readingName = true
        var quoted = false
        func finish() {
            let key = name.trimmingSpaces()
            if !key.isEmpty { values[key] = value }
            name = ""
            value = ""
            readingName = true
        }
        for character in text {
            switch character {
            case "=" where readingName: readingName = false
            case "\"" where !readingName: quoted.toggle()
            case "," where !quoted: finish()
            default: if readingName { name.append(character) } else { value.append(character) }
            }
        }
        finish()
    }

    subscript(name: String) -> String? { values[name] }

    func integer(_ name: String) -> Int? { values[name].flatMap { Int($0) } }

    func decimal(_ name: String) -> Double? { values[name].flatMap { Double($0) } }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
