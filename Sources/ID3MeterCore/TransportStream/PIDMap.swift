/// Values by PID for the PIDs a demuxer follows: a timed-ID3 PID or two, a PAT, a PMT or two.
/// So few are looked through, which costs less than the SipHash a `Dictionary` ran on every
/// lookup (eight a tag packet); a stream that names more (its PMTs may declare thousands of
/// timed-ID3 PIDs) gets an index, so that no packet costs as much as there are PIDs. Values are
/// changed in place, never copied to be changed.
struct PIDMap<Value: Equatable & Sendable>: Equatable, Sendable {
    /// More PIDs than this are found through `index`.
    private static var linearLimit: Int { 8 }

    private var pids: [Int] = []
    /// `nil` only while a caller that removes the value is changing it in place.
    private var values: [Value?] = []
    /// Where each PID is in `pids`, once there are more than `linearLimit`.
    private var index: [Int: Int]?

    /// The PIDs that have a value, in increasing order.
    var sortedPIDs: [Int] { pids.sorted() }

    var allValues: [Value] { values.compactMap(\.self) }

    subscript(pid: Int) -> Value? {
        get { position(of: pid).flatMap { values[$0] } }
        _modify {
            if let position = position(of: pid) {
                yield &values[position]
                if values[position] == nil { remove(at: position) }
            } else {
                var value: Value?
                yield &value
                if let value { append(pid, value) }
            }
        }
    }

    /// The value of `pid`, made from `defaultValue` when there is none.
    subscript(pid: Int, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[pid] ?? defaultValue() }
        _modify {
            let position = position(of: pid) ?? append(pid, defaultValue())
            yield &values[position]!
        }
    }

    @discardableResult
    mutating func removeValue(forKey pid: Int) -> Value? {
        guard let position = position(of: pid) else { return nil }
        let value = values[position]
        remove(at: position)
        return value
    }

    mutating func removeAll() {
        pids.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        index = nil
    }

    /// Whichever order the PIDs came in.
    static func == (lhs: PIDMap, rhs: PIDMap) -> Bool {
        lhs.pids.count == rhs.pids.count && zip(lhs.pids, lhs.values).allSatisfy { rhs[$0] == $1 }
    }

    private func position(of pid: Int) -> Int? {
        if let index { return index[pid] }
        return pids.firstIndex(of: pid)
    }

    @discardableResult
    private mutating func append(_ pid: Int, _ value: Value) -> Int {
        pids.append(pid)
        values.append(value)
        if index != nil {
            index![pid] = pids.count - 1
        } else if pids.count > Self.linearLimit {
            index = Dictionary(uniqueKeysWithValues: pids.enumerated().map { ($1, $0) })
        }
        return pids.count - 1
    }

    /// The last entry takes the removed one's place: nothing else moves.
    private mutating func remove(at position: Int) {
        let removed = pids[position]
        pids.swapAt(position, pids.count - 1)
        values.swapAt(position, values.count - 1)
        pids.removeLast()
        values.removeLast()
        guard index != nil else { return }
        index![removed] = nil
        if position < pids.count { index![pids[position]] = position }
    }
}
