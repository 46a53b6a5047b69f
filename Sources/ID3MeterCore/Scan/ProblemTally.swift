/// Problems past the first few of a kind are counted, not kept or printed: a stream full of
/// damage must fill neither memory nor a terminal, and each problem is still accounted for.
/// A problem's kind is its message with the numbers taken out ("continuity error on PID 0x#").
package struct ProblemTally: Sendable {
    package static let shownPerKind = 5
    /// Beyond this many kinds, the rest share one: kinds come from the stream's own values.
    private static let maximumKinds = 100

    private var seen: [String: Int] = [:]
    /// Held back since the last `summaries()`, by kind: how many, and the last message.
    private var held: [String: (count: Int, last: String)] = [:]
    private var heldOrder: [String] = []

    package init() {}

    /// Whether `message` is to be shown: the first few of its kind are; the rest are counted.
    package mutating func admit(_ message: String) -> Bool {
        var kind = Self.kind(of: message)
        if seen[kind] == nil, seen.count >= Self.maximumKinds { kind = "" }
        let count = seen[kind, default: 0] + 1
        seen[kind] = count
        if count <= Self.shownPerKind { return true }
        if held[kind] == nil { heldOrder.append(kind) }
        held[kind] = ((held[kind]?.count ?? 0) + 1, message)
        return false
    }

    /// For each kind held back since the last call, how many and the last of them.
    package mutating func heldBack() -> [(count: Int, last: String)] {
        defer {
            held.removeAll()
            heldOrder.removeAll()
        }
        return heldOrder.map { held[$0]! }
    }

    /// `heldBack()`, a line per kind.
    package mutating func summaries() -> [String] {
        heldBack().map { "\(InputFailure.Kind.heldBack(count: $0.count, last: $0.last))" }
    }

    static func kind(of message: String) -> String {
        var kind = ""
        var inNumber = false
        for character in message {
            if character.isNumber {
                if !inNumber { kind.append("#") }
                inNumber = true
            } else {
                kind.append(character)
                inNumber = false
            }
        }
        return kind
    }
}
