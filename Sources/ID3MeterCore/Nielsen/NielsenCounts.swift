/// Nielsen tags counted one way wherever they are summed (a scan's closing lines, a channel of
/// `serve`): every tag, the valid ones, and those with the placeholder PC CID, valid or not.
package struct NielsenCounts: Sendable, Equatable {
    package var tags = 0
    package var valid = 0
    package var placeholder = 0

    package var invalid: Int { tags - valid }

    package init() {}

    package mutating func add(_ tag: NielsenTag) {
        tags += 1
        if tag.isValid { valid += 1 }
        if tag.hasPlaceholderPCCID { placeholder += 1 }
    }

    package mutating func add(_ other: NielsenCounts) {
        tags += other.tags
        valid += other.valid
        placeholder += other.placeholder
    }
}
