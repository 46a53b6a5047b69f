import Foundation
import ID3MeterCore
import SampleGenerator
import Synchronization
import Testing

/// `scan --all-renditions`: every rendition of a ladder read, their tags compared, the rendition
/// at fault named. The samples' faults are their writers' (scripts/ladder_samples.py's truth.json:
/// ffmpeg's `-map` that dropped the timed-ID3 PID, the script's PTS shift, the emsg it left out).
@Suite("Renditions compared", .timeLimit(.minutes(3)))
struct RenditionComparisonTests {
    struct Truth: Decodable {
        struct Fault: Decodable {
            var kind: String
            var count: Int?
            var firstSegment: String?
            var lastSegment: String?
            var seconds: Double?

            enum CodingKeys: String, CodingKey { case kind, count, firstSegment = "first_segment", lastSegment = "last_segment", seconds }
        }

        var tags: Int
        var faults: [String: Fault]
    }

    static func truth() throws -> [String: Truth] {
        try JSONDecoder().decode([String: Truth].self, from: Data(contentsOf: URL(fileURLWithPath: Samples.path("ladder/truth.json"))))
    }

    /// The JSON report's comparison of `input`'s renditions, and the scan's exit status.
    static func compared(_ input: String, strict: Bool = false) throws -> (rows: [[String: Any]], status: Int32, stderr: String) {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("qa.json").path
        let result = try Command.run(["scan", "--all-renditions", "--quiet", "--report", report] + (strict ? ["--strict"] : []) + [input])
        let json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let comparisons = try #require(json["renditions"] as? [[String: Any]])
        #expect(comparisons.count == 1)
        let rows = try #require(comparisons.first?["renditions"] as? [[String: Any]])
        let failed = json["failed_checks"] as? [String: [String]] ?? [:]
        #expect((failed["renditions"] != nil) == rows.contains { $0["passed"] as? Bool == false })
        return (rows, result.status, result.stderr)
    }

    @Test(arguments: ["master-intact.m3u8", "master-faulty.m3u8", "master-untagged.m3u8", "dash/manifest.mpd"])
    func eachRenditionAtFaultIsNamedAsItsWriterMadeIt(_ sample: String) throws {
        let truth = try #require(try Self.truth()[sample])
        let (rows, status, stderr) = try Self.compared(Samples.path("ladder/" + sample), strict: true)
        #expect(status == (truth.faults.isEmpty ? 0 : 3), "\(stderr)")
        #expect(rows.count >= 2)
        for row in rows {
            let name = try #require(row["name"] as? String)
            let faults = row["faults"] as? [[String: Any]] ?? []
            let planted = truth.faults.first { name == $0.key || name.hasSuffix("/" + $0.key) }?.value
            guard let planted else {
                #expect(faults.isEmpty, "\(name): \(faults)")
                #expect(row["tags"] as? Int == truth.tags, "\(name)")
                continue
            }
            #expect(faults.count == 1, "\(name): \(faults)")
            let fault = try #require(faults.first)
            #expect(fault["kind"] as? String == planted.kind, "\(name)")
            if let count = planted.count { #expect(fault["count"] as? Int == count) }
            if let first = planted.firstSegment { #expect((fault["first_segment"] as? String)?.hasSuffix("/" + first) == true, "\(fault)") }
            if let last = planted.lastSegment { #expect((fault["last_segment"] as? String)?.hasSuffix("/" + last) == true, "\(fault)") }
            if let seconds = planted.seconds { #expect(abs((fault["seconds"] as? Double ?? 0) - seconds) < 1.0 / 90_000, "\(fault)") }
            // On stderr too, naming the presentation and the rendition.
            #expect(stderr.contains("[\(name)]: "), "\(stderr)")
        }
        // Without --strict a failed check is not an error.
        if !truth.faults.isEmpty { #expect(try Self.compared(Samples.path("ladder/" + sample)).status == 0) }
    }

    /// Over HTTP, the renditions' reads share the scan's connections.
    @Test func aRemoteLadderIsReadOverSharedConnections() throws {
        let requests = Mutex(0)
        let root = Samples.folder
        let server = try LocalHTTPServer { request in
            requests.withLock { $0 += 1 }
            return request.method == "GET" ? .file(request.path, in: root) : .notFound
        }
        defer { server.stop() }
        let (rows, status, stderr) = try Self.compared(server.url("ladder/master-faulty.m3u8"))
        #expect(status == 0, "\(stderr)")
        let faults = rows.map { ($0["name"] as? String ?? "", ($0["faults"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }) }
        #expect(faults.map(\.1) == [[], ["missing"], ["offset"]], "\(faults)")
        #expect(faults.map(\.0) == ["v0.m3u8", "stripped.m3u8", "shifted.m3u8"].map { server.url("ladder/" + $0) })
        // 3 media playlists and 21 segments, and the master read for the ladder and by each walk.
        let asked = requests.withLock { $0 }
        #expect(asked >= 24)
        #expect(server.connections <= 4, "\(server.connections) connections for \(asked) requests")
    }

    /// An input without renditions is read as it is, and said; a master named twice is two ladders.
    @Test func whatIsNotALadderIsSaidAndALadderNamedTwiceIsComparedTwice() throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("qa.json").path
        let master = Samples.path("ladder/master-faulty.m3u8"), file = Samples.path("ts/nielsen.ts")
        let result = try Command.run(["scan", "--all-renditions", "--quiet", "--report", report, file, master, master])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("\(file): --all-renditions: not a master playlist or MPD of several renditions; read as it is"))
        let json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let comparisons = try #require(json["renditions"] as? [[String: Any]])
        #expect(comparisons.map { ($0["renditions"] as? [Any])?.count } == [3, 3])
        #expect((json["sources"] as? [Any])?.count == 7)
    }

    // The comparison's rules, on tags placed by hand.

    static func rendition(_ name: String, group: String = "variant", tags: [(String, Int64)], segments: [(String, Int64, Double)] = [])
        -> RenditionTags {
        var rendition = RenditionTags(name: name, group: group, frameRate: 25)
        for (id, pts) in tags { rendition.add(tag: id, pts: pts, segment: segments.last { $0.1 <= pts }?.0) }
        for (uri, start, duration) in segments { rendition.add(segment: uri, startPTS: start, duration: duration) }
        return rendition
    }

    /// Ten seconds of a tag every two seconds, in 2 s segments, from `first` (seconds).
    static func window(_ name: String, from first: Int, to last: Int, skipping: Set<Int> = []) -> RenditionTags {
        let seconds = stride(from: first, to: last, by: 2)
        return rendition(name, tags: seconds.filter { !skipping.contains($0) }.map { ("tag\($0)", Int64($0) * 90_000) },
                         segments: seconds.map { ("seg\($0 / 2).ts", Int64($0) * 90_000, 2) })
    }

    /// A live playlist read as it stands by each rendition at a slightly different moment: the
    /// windows differ by a segment at each end, and no tag outside a rendition's window counts.
    @Test func windowsThatDifferAtTheEdgesAreTheSameTags() {
        let comparison = RenditionComparison(source: "live.m3u8", renditions: [
            Self.window("a", from: 0, to: 20), Self.window("b", from: 2, to: 22), Self.window("c", from: 4, to: 24),
        ])
        #expect(comparison.passed, "\(comparison.renditions.map(\.faults))")
    }

    @Test func aTagMostLackIsExtraWhereItIs() {
        var odd = Self.window("b", from: 0, to: 20)
        odd.add(tag: "stray", pts: 5 * 90_000, segment: "seg2.ts")
        let comparison = RenditionComparison(source: "m.m3u8", renditions: [Self.window("a", from: 0, to: 20), odd, Self.window("c", from: 0, to: 20)])
        #expect(comparison.renditions.map(\.faults) == [[], [.extra(count: 1, firstSegment: "seg2.ts", lastSegment: "seg2.ts")], []])
    }

    @Test func aTagLostInTheMiddleIsMissingWithItsSegment() {
        let comparison = RenditionComparison(source: "m.m3u8", renditions: [
            Self.window("a", from: 0, to: 20), Self.window("b", from: 0, to: 20, skipping: [8, 10]),
        ])
        #expect(comparison.renditions.map(\.faults) == [[], [.missing(count: 2, firstSegment: "seg4.ts", lastSegment: "seg5.ts")]])
    }

    /// A frame at the slowest declared rate is allowed; more is an offset, whichever rendition is listed first.
    @Test func anOffsetBeyondAFrameIsTheOutliersWhereverItIsListed() {
        func shifted(_ ticks: Int64) -> RenditionTags {
            Self.rendition("late", tags: (0..<5).map { ("tag\($0)", Int64($0) * 180_000 + ticks) })
        }
        let intact = (0..<2).map { index in Self.rendition("r\(index)", tags: (0..<5).map { ("tag\($0)", Int64($0) * 180_000) }) }
        let withinAFrame = RenditionComparison(source: "m", renditions: [shifted(3_600)] + intact)
        #expect(withinAFrame.passed && withinAFrame.frame == 0.04)
        let late = RenditionComparison(source: "m", renditions: [shifted(9_000)] + intact)
        #expect(late.renditions.map(\.faults) == [[.offset(seconds: 0.1)], [], []])
    }

    /// Tags in the audio rendition only (a demuxed ladder) or in the variants only: the group
    /// that carries none is the packager's design, not a fault; one of a carrying group without any is.
    @Test func aGroupThatCarriesNoneIsNotAtFault() {
        let tags = (0..<5).map { ("tag\($0)", Int64($0) * 180_000) }
        let comparison = RenditionComparison(source: "m", renditions: [
            Self.rendition("v0", tags: tags), Self.rendition("v1", tags: tags),
            Self.rendition("en", group: "audio", tags: []), Self.rendition("es", group: "audio", tags: []),
        ])
        #expect(comparison.passed)
        #expect(comparison.renditions.map(\.groupCarriesNone) == [false, false, true, true])
        let oneLacking = RenditionComparison(source: "m", renditions: [Self.rendition("v0", tags: tags), Self.rendition("v1", tags: [])])
        #expect(oneLacking.renditions.map(\.faults) == [[], [.noTimedID3]])
        // Tags without a PTS are tags: not placed, not judged by time, not "no timed ID3".
        var unplaced = Self.rendition("v1", tags: [])
        unplaced.add(tag: "tag0", pts: nil, segment: nil)
        #expect(RenditionComparison(source: "m", renditions: [Self.rendition("v0", tags: tags), unplaced]).passed)
        var unread = Self.rendition("v2", tags: [])
        unread.readable = false
        #expect(RenditionComparison(source: "m", renditions: [Self.rendition("v0", tags: tags), unread]).renditions[1].faults == [.unreadable])
    }
}
