import Foundation
import Testing
@testable import ID3MeterCore

/// Streams written to the rules of Nielsen's ID3 Tag Validator by an independent writer
/// (`scripts/validator_samples.py`, which shares no code with the project), each clean or with
/// one planted defect, against the ground truth the writer planted (`truth.json`): the checks
/// that fail, and for each check the PTS of every finding. Nothing else may be found.
@Suite("Validator samples")
struct ValidatorSampleTests {
    struct Truth: Decodable {
        var failing: [String]
        var findings: [String: [Int64]]
        /// The sample's file, when not `NAME.ts`.
        var file: String?
    }

    static let truth: [String: Truth] = {
        let url = URL(fileURLWithPath: Samples.path("validator/truth.json"))
        return (try? JSONDecoder().decode([String: Truth].self, from: Data(contentsOf: url))) ?? [:]
    }()

    /// Every finding that counts against a check, as (check, PTS).
    static func findings(_ report: SourceReport) -> [String: [Int64]] {
        let all = report.invalidTags + report.structure + report.offsetErrors + report.placeholderRuns + report.lateInfoTags
            + report.duplicates + report.malformedPackets + (report.shortGaps + report.longGaps + report.timeGaps).map(\.at)
        var byCheck: [String: [Int64]] = [:]
        for finding in all {
            guard let check = finding.check else { continue }
            byCheck[check, default: []].append(finding.pts ?? -1)
        }
        return byCheck.mapValues { $0.sorted() }
    }

    @Test func theWriterPlantedEverySample() {
        #expect(Self.truth.count == 16, "truth.json read: \(Self.truth.keys.sorted())")
    }

    @Test(arguments: truth.keys.sorted())
    func eachDefectIsFoundOnceAtItsTimeAndNothingElse(sample: String) async throws {
        let truth = try #require(Self.truth[sample])
        var builder = SourceReportBuilder(source: sample)
        await Samples.scan(Samples.path("validator/" + (truth.file ?? "\(sample).ts"))).forEach { builder.add($0) }
        let report = builder.report
        #expect(Set(report.failedChecks) == Set(truth.failing), "\(sample)")
        // Read around, and said: a PES without a PTS, an undeclared PID, an emsg's value.
        #expect(report.recoveries.isEmpty == !["pes_without_pts", "no_descriptor", "emsg_value"].contains(sample), "\(sample): \(report.recoveries)")
        #expect(Self.findings(report) == truth.findings.mapValues { $0.sorted() }, "\(sample)")
        #expect(report.failures.isEmpty && report.malformedPackets.isEmpty, "\(sample): \(report.failures)")
        let judged = Set(report.checks.filter { $0.status != .noStatus }.map(\.name))
        if truth.file == nil {
            // Every MPEG-TS one has the program's audio: test 22 and the coverage are judged.
            #expect(judged.isSuperset(of: ["tag_placement", "coverage", "metadata_pes_pts", "pmt_descriptor"]), "\(sample)")
            #expect(!judged.contains("emsg_value"))
        } else {
            #expect(judged.isDisjoint(with: ["tag_placement", "metadata_pes_pts", "pmt_descriptor", "one_tag_per_pes"]), "\(sample)")
            #expect(judged.contains("emsg_value"))
        }
    }

    /// Two PIDs a quarter of a second apart: each is a tag stream of its own.
    @Test func twoPIDsAreJudgedApart() async {
        var builder = SourceReportBuilder(source: "two_pids")
        await Samples.scan(Samples.path("validator/two_pids.ts")).forEach { builder.add($0) }
        let report = builder.report
        #expect(report.streams == ["PID 0x0102", "PID 0x0103"])
        #expect(report.shortGaps.isEmpty && report.duplicates.isEmpty)
        #expect(report.dataTags == 24 && report.infoTags == 0)
    }

    /// The writer put INFO tags 300 s apart: the report says how far apart they came.
    @Test func theIntervalBetweenINFOTagsIsReported() async {
        var builder = SourceReportBuilder(source: "info_every_300s")
        await Samples.scan(Samples.path("validator/info_every_300s.ts")).forEach { builder.add($0) }
        #expect(builder.report.infoTagInterval == 300.0...300.0)
        #expect(builder.report.infoTags == 2)
    }

    /// A check's tolerance is the operator's to set: one long spacing, tolerated by the guide's
    /// 7, fails at 0.
    @Test func aToleranceCanBeSet() async {
        for (tolerated, fails) in [(7, false), (0, true)] {
            var builder = SourceReportBuilder(source: "one_long_spacing", tolerances: QATolerances(["tag_duration": tolerated]))
            await Samples.scan(Samples.path("validator/one_long_spacing.ts")).forEach { builder.add($0) }
            let row = builder.report.checks.first { $0.name == "tag_duration" }
            #expect(row?.status == (fails ? .fail : .pass))
            #expect(row?.result == "\(fails ? "Fail" : "Pass") <1/0/\(tolerated)>")
        }
    }
}
