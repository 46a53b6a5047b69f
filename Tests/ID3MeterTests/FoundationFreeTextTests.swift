import Foundation
import Testing
@testable import ID3MeterCore

/// What the core writes and reads without ICU agrees with what Foundation and the C library
/// wrote and read before: the same numbers, the same paths.
@Suite("Text without ICU")
struct FoundationFreeTextTests {
    /// `FixedPoint` against glibc's `printf` (through `String(format:)`), on values a report
    /// writes and on ones that land on a half after scaling, where a product's rounding misleads.
    @Test func numbersAreWrittenAsPrintfWritesThem() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0004, 0.125, 0.375, 2.5, 3.5, 42.0355, 1.005, 2.675, 1e9 + 0.5, -12.3456789, 29.97002997, 1e14]
        values += (0..<20_000).map { _ in Double.random(in: -100_000...100_000, using: &generator) }
        values += (0..<20_000).map { _ in Double(Int.random(in: 0...2_000_000, using: &generator)) / 1_000 + 0.0005 }
        for value in values {
            for places in [0, 1, 3, 6] {
                #expect(FixedPoint.string(value, places: places) == String(format: "%.\(places)f", value), "\(value) to \(places)")
            }
            #expect(FixedPoint.string(value, places: 3, sign: true) == String(format: "%+.3f", value))
            #expect(FixedPoint.string(value, places: 3, width: 10) == String(format: "%10.3f", value))
        }
    }

    /// Paths are made as before, without NSString: `.` and empty components gone, `..` taking
    /// the component before it, a trailing slash dropped; the last component named as NSString names it.
    @Test(arguments: ["/a/b/../c", "/a/./b//c/", "/../a", "/a/b/..", "a/b/../c", "./a", "a//b", "/", "v", "a/../../b", "/a/b/c/../../d"])
    func pathsAreStandardizedWithoutNSString(_ path: String) {
        let expected: [String: String] = ["/a/b/../c": "/a/c", "/a/./b//c/": "/a/b/c", "/../a": "/a", "/a/b/..": "/a", "a/b/../c": "a/c",
                                          "./a": "a", "a//b": "a/b", "/": "/", "v": "v", "a/../../b": "../b", "/a/b/c/../../d": "/a/d"]
        #expect(Location.standardized(path) == expected[path])
        #expect(Location.name(path) == (path as NSString).lastPathComponent)
    }
}
