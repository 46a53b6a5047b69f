/// Values by PID for the few PIDs a demuxer follows (a timed-ID3 PID or two, a PAT, a PMT or
/// two), found by looking through them: a `Dictionary` hashed the PID with SipHash on every
/// lookup, eight times a tag packet. Values are changed in place, never copied to be changed.
struct PIDMap<Value: Equatable & Sendable>: Equatable, Sendable {
    private var pids: [Int] = []
    /// `nil` only while a caller that removes the value is changing it.
    private var values: [Value?] = []

    var allValues: [Value] { values.compactMap(\.self) }

    /// The PIDs that have a value, in increasing order.
    var sortedPIDs: [Int] { pids.sorted() }

    subscript(pid: Int) -> Value? {
        get { pids.firstIndex(of: pid).flatMap { values[$0] } }
        _modify {
            let index = slot(of: pid)
            yield &values[index]
            if values[index] == nil {
                pids.remove(at: index)
                values.remove(at: index)
            }
        }
    }

    /// The value of `pid`, made from `defaultValue` when there is none.
    subscript(pid: Int, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[pid] ?? defaultValue() }
        _modify {
            let index = slot(of: pid)
            if values[index] == nil { values[index] = defaultValue() }
            yield &values[index]!
        }
    }

    @discardableResult
    mutating func removeValue(forKey pid: Int) -> Value? {
        guard let index = pids.firstIndex(of: pid) else { return nil }
        pids.remove(at: index)
        return values.remove(at: index)
    }

    mutating func removeAll() {
        pids.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// Whichever order the PIDs came in.
    static func == (lhs: PIDMap, rhs: PIDMap) -> Bool {
        lhs.pids.count == rhs.pids.count && lhs.pids.allSatisfy { lhs[$0] == rhs[$0] }
    }

    private mutating func slot(of pid: Int) -> Int {
        if let index = pids.firstIndex(of: pid) { return index }
        pids.append(pid)
        values.append(nil)
        return pids.count - 1
    }
}
