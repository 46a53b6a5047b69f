/// Why a test's own set-up failed, in words that the test report prints: a `POSIXError`'s
/// message is not printed on Linux (only its code is, which once left a CI failure
/// unexplained). On one line, since CI shows a failing test's lines that start with its mark.
struct TestFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description.split(whereSeparator: \.isNewline).joined(separator: " | ")
    }
}
