extension Array where Element == Double {
    /// Whether these times are `expected`, one for one, each within `tolerance`. The counts must
    /// agree: `zip` alone stops at the shorter list, so no deliveries at all would pass.
    func matches(_ expected: [Double], within tolerance: Double) -> Bool {
        count == expected.count && zip(self, expected).allSatisfy { abs($0 - $1) < tolerance }
    }
}
