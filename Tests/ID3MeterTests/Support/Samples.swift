import Foundation
import ID3Meter
import SampleGenerator

/// The checked-in samples and the ground truth the generator wrote beside them.
enum Samples {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let folder = root.appendingPathComponent("samples")

    static func path(_ relative: String) -> String { folder.appendingPathComponent(relative).path }

    static func expected(_ relative: String) throws -> [ExpectedFrame] {
        let text = try String(contentsOfFile: path(relative), encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(ExpectedFrame.self, from: Data($0.utf8)) }
    }

    /// Network retries quick enough for tests.
    static let quickRetry = Fetcher.RetryPolicy(attempts: 3, firstDelay: .seconds(0.05), maximumDelay: .seconds(0.2))

    static func scan(_ input: String, variant: VariantChoice = .lowestBandwidth, programs: ProgramSelection = .all,
                     fetcher: Fetcher = Fetcher(retry: quickRetry)) async -> [MediaEvent] {
        var events: [MediaEvent] = []
        await TagScanner(variant: variant, programs: programs, fetcher: fetcher).scan(input) { events.append($0) }
        return events
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("id3-meter-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// The pieces of scan events that tests compare with a sample's ground truth.
struct FoundFrame: Equatable, CustomStringConvertible {
    var pts: Int64?
    var id: String
    var label: String?
    var segment: String?

    var description: String { "\(pts.map(String.init) ?? "-") \(id) \(label ?? "") \(segment ?? "")" }

    init(pts: Int64?, id: String, label: String?, segment: String?) {
        self.pts = pts
        self.id = id
        self.label = label
        self.segment = segment
    }

    init(_ expected: ExpectedFrame) {
        self.init(pts: expected.pts, id: expected.id, label: expected.owner ?? expected.description, segment: expected.segment)
    }
}

extension Array where Element == MediaEvent {
    var tags: [TimedTag] { compactMap { if case .tag(let tag) = $0 { tag } else { nil } } }
    /// The segments read, in order.
    var segments: [TagOrigin.Segment] { compactMap { if case .segment(let segment) = $0 { segment } else { nil } } }
    var failures: [InputFailure] { compactMap { if case .failure(let failure) = $0 { failure } else { nil } } }
    var warnings: [InputFailure] { compactMap { if case .warning(let warning) = $0 { warning } else { nil } } }
    var malformed: [ID3ParseError] { compactMap { if case .malformed(let error, _, _) = $0 { error } else { nil } } }

    func frames(segmentNames: Bool = false) -> [FoundFrame] {
        tags.flatMap { timed in
            timed.tag.frames.map { frame in
                let label: String? = switch frame.content {
                case .priv(let owner, _): owner
                case .userText(let description, _): description
                default: nil
                }
                let segment = segmentNames ? timed.origin.segment.map { ($0.uri as NSString).lastPathComponent } : nil
                return FoundFrame(pts: timed.pts, id: frame.id, label: label, segment: segment)
            }
        }
    }
}
