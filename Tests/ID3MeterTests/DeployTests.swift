import Foundation
import Logging
import Prometheus
import Testing
import Yams
import ID3Meter
import ID3MeterServe

/// What `deploy/` ships is read the way its consumers read it.
@Suite("Deploy files", .timeLimit(.minutes(1)))
struct DeployTests {
    /// Every rule has a name and an expression, and every id3meter series an expression uses is
    /// one `serve` exposes (as a freshly started line-up's /metrics has it).
    @Test func theAlertingRulesUseOnlySeriesTheMeterExposes() async throws {
        let text = try String(contentsOf: Samples.root.appendingPathComponent("deploy/prometheus/id3-meter-rules.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let groups = try #require(document["groups"] as? [[String: Any]])
        let rules = groups.flatMap { ($0["rules"] as? [[String: Any]]) ?? [] }
        #expect(rules.count >= 4)
        #expect(rules.allSatisfy { $0["alert"] is String && $0["expr"] is String })

        let registry = PrometheusCollectorRegistry()
        let lineup = Lineup(fetcher: Fetcher(retry: .none), output: LineupOutput([]), logger: Logger(label: "deploy-test"),
                            metrics: PrometheusMetricsFactory.lineup(registry: registry))
        await lineup.apply(try LineupConfig.parse("channels:\n  - {name: c, url: \"http://127.0.0.1:9/c.m3u8\"}\n", file: "x.yaml"))
        let exposed = Set(registry.emitToString().split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("# TYPE ") ? line.split(separator: " ")[2].description : nil
        })
        await lineup.removeAll()
        let used = rules.compactMap { $0["expr"] as? String }.flatMap { expr in
            expr.matches(of: /id3meter_[a-z_]+/).map { String($0.output) }
        }
        #expect(!used.isEmpty)
        for name in used {
            let family = name.replacing(/_(bucket|count|sum)$/, with: "")
            #expect(exposed.contains(family), "\(name) is not among \(exposed.sorted())")
        }
    }
}
