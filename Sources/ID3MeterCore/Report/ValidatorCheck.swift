/// One row of the QA report in the terms of Nielsen's ID3 Tag Validator (user guide release 1.8
/// revision F): its test number where it has one, and a result read as the Validator's
/// `<errors / minimum / maximum tolerated>`: a test fails past its tolerance, or below its
/// minimum, not at the first error.
package struct ValidatorCheck: Encodable, Sendable, Equatable {
    public enum Status: String, Encodable, Sendable {
        case pass, fail
        /// Not judged: it needs Nielsen's keys, or does not apply to this carriage.
        case noStatus = "no status"
    }

    public var name: String
    /// The Validator's test number; `nil` for a check of ours.
    public var test: Int?
    public var status: Status
    /// Errors found, or for a count check the number found.
    public var count: Int?
    /// For a count check, the number needed to pass.
    public var minimum: Int?
    /// For an error check, the most errors that still pass.
    public var tolerated: Int?
    /// What the row judges (and, for a proxy, what it stands for), or why it has no status.
    public var basis: String

    /// An error check: `count` errors pass up to `tolerated`.
    static func errors(_ name: String, test: Int?, count: Int, tolerated: Int, basis: String) -> ValidatorCheck {
        ValidatorCheck(name: name, test: test, status: count > tolerated ? .fail : .pass, count: count, tolerated: tolerated, basis: basis)
    }

    /// A count check: `count` found passes from `minimum`.
    static func count(_ name: String, test: Int?, count: Int, minimum: Int, basis: String) -> ValidatorCheck {
        ValidatorCheck(name: name, test: test, status: count < minimum ? .fail : .pass, count: count, minimum: minimum, basis: basis)
    }

    static func notJudged(_ name: String, test: Int?, because reason: String) -> ValidatorCheck {
        ValidatorCheck(name: name, test: test, status: .noStatus, basis: reason)
    }

    /// `Pass <2/0/7>`, as the Validator prints a result.
    public var result: String {
        switch status {
        case .noStatus: "No status"
        case .pass, .fail: "\(status == .pass ? "Pass" : "Fail") <\(count ?? 0)/\(minimum ?? 0)/\(tolerated ?? 0)>"
        }
    }
}

/// The most errors each check tolerates, by check name: the Validator's figures from its guide
/// where it gives one (its examples, for a stream of about 15 minutes), none for the checks of
/// ours; `scan --tolerance NAME=N` sets one.
package struct QATolerances: Sendable, Equatable {
    public private(set) var values: [String: Int]

    public static let guide: [String: Int] = [
        "tag_format": 0, "time_gap": 7, "tag_duration": 7, "cid_ts_offset": 32, "breakout": 0, "info_tag_interval": 1,
        "tag_time": 5, "metadata_pes_pts": 4, "pes_incomplete_tag": 7, "pmt_descriptor": 0,
        "read_errors": 0, "duplicates": 0, "placeholder_run": 0, "one_tag_per_pes": 0, "emsg_value": 0,
        "tag_placement": 7, "coverage": 0,
    ]

    public init(_ overrides: [String: Int] = [:]) { values = Self.guide.merging(overrides) { $1 } }

    /// The names a tolerance can be set for.
    public static var names: [String] { guide.keys.sorted() }

    public subscript(name: String) -> Int { values[name] ?? 0 }
}
