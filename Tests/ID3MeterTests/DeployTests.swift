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
        let lineup = Lineup(fetcher: Fetcher(retry: .none), output: OutputSet([]), logger: Logger(label: "deploy-test"),
                            metrics: PrometheusMetricsFactory.lineup(registry: registry))
        // The outputs' series, as serve's API registers them.
        let api = LineupAPI(lineup: lineup, registry: registry, outputs: OutputSet([StreamOutput()]))
        await lineup.apply(try LineupConfig.parse("channels:\n  - {name: c, url: \"http://127.0.0.1:9/c.m3u8\"}\n", file: "x.yaml"))
        await api.refreshMetrics()  // as a scrape does
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

    /// The rules as Prometheus reads them (`promtool check rules`), and their unit tests
    /// (`promtool test rules`: redundant copies of a channel, one blind, the stream's own loss,
    /// a copy gone), evaluated by Prometheus's own engine.
    @Test func promtoolAcceptsTheRulesAndTheyFireWhenTheirTestsSay() throws {
        let folder = Samples.root.appendingPathComponent("deploy/prometheus")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool"),
                     "no /usr/bin/promtool: `make promtool` (or `make test`) installs Debian's prometheus")
        for arguments in [["check", "rules", "id3-meter-rules.yaml"], ["test", "rules", "id3-meter-rules.test.yaml"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
            process.arguments = arguments
            process.currentDirectoryURL = folder
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            Command.watch(process, after: 30)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "promtool \(arguments.joined(separator: " ")): \(text)")
            #expect(text.contains("SUCCESS"), "\(text)")
        }
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: Samples.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every manifest of `deploy/kubernetes`, by kind, as kubectl would read them.
    static func manifests() throws -> [String: [String: Any]] {
        let folder = Samples.root.appendingPathComponent("deploy/kubernetes")
        var byKind: [String: [String: Any]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".yaml") {
            for document in try Yams.load_all(yaml: try text("deploy/kubernetes/\(name)")) {
                let manifest = try #require(document as? [String: Any], "\(name)")
                let kind = try #require(manifest["kind"] as? String, "\(name) has no kind")
                #expect(byKind[kind] == nil, "two \(kind)s")
                byKind[kind] = manifest
            }
        }
        return byKind
    }

    /// The manifests agree with each other and with the meter: the StatefulSet's pods are what
    /// the headless Service selects and the ServiceMonitor scrapes, the probes and ports are
    /// the API's, the replicas are shards × copies with the copies of a shard kept apart (nodes,
    /// zones, drains), every flag is one `serve` takes, its
    /// paths are on the volumes, the ConfigMap's line-up is one the meter accepts, and the
    /// PrometheusRule holds exactly the rules of deploy/prometheus.
    @Test func theKubernetesManifestsHangTogether() throws {
        let manifests = try Self.manifests()
        let listed = try #require(manifests["Kustomization"]?["resources"] as? [String])
        let files = try FileManager.default.contentsOfDirectory(atPath: Samples.root.appendingPathComponent("deploy/kubernetes").path)
        #expect(Set(listed) == Set(files.filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" }))

        let set = try #require(manifests["StatefulSet"]?["spec"] as? [String: Any])
        let service = try #require(manifests["Service"])
        let serviceSpec = try #require(service["spec"] as? [String: Any])
        let serviceName = (service["metadata"] as? [String: Any])?["name"] as? String
        #expect(set["serviceName"] as? String == serviceName)
        #expect(serviceSpec["clusterIP"] as? String == "None", "headless")
        let template = try #require(set["template"] as? [String: Any])
        let podLabels = try #require((template["metadata"] as? [String: Any])?["labels"] as? [String: String])
        let selects = try #require(serviceSpec["selector"] as? [String: String])
        #expect(!selects.isEmpty && selects.allSatisfy { podLabels[$0.key] == $0.value }, "the Service selects the pods")
        let serviceLabels = try #require((service["metadata"] as? [String: Any])?["labels"] as? [String: String])
        let monitor = try #require(manifests["ServiceMonitor"]?["spec"] as? [String: Any])
        let monitored = try #require((monitor["selector"] as? [String: Any])?["matchLabels"] as? [String: String])
        #expect(!monitored.isEmpty && monitored.allSatisfy { serviceLabels[$0.key] == $0.value }, "the ServiceMonitor selects the Service")
        let endpoint = try #require((monitor["endpoints"] as? [[String: Any]])?.first)
        #expect(endpoint["path"] as? String == "/metrics")
        let servicePorts = try #require(serviceSpec["ports"] as? [[String: Any]])
        #expect(servicePorts.contains { $0["name"] as? String == endpoint["port"] as? String })

        let pod = try #require(template["spec"] as? [String: Any])
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let arguments = try #require(container["args"] as? [String])
        #expect(arguments.first == "serve")
        var flags: [String: String] = [:]
        for argument in arguments.dropFirst(2) {
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            flags[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        let help = try Command.run(["serve", "--help"]).stdout
        for flag in flags.keys { #expect(help.contains(flag), "serve takes no \(flag)") }
        let port = try #require((container["ports"] as? [[String: Any]])?.first)
        #expect(flags["--listen"] == "0.0.0.0:\(port["containerPort"] as? Int ?? -1)")
        #expect(servicePorts.contains { $0["targetPort"] as? String == port["name"] as? String })
        for probe in ["readinessProbe", "livenessProbe"] {
            let get = try #require((container[probe] as? [String: Any])?["httpGet"] as? [String: Any], "\(probe)")
            #expect(get["path"] as? String == "/healthz" && get["port"] as? String == port["name"] as? String, "\(probe)")
        }
        #expect(flags["--shard"] == "auto")
        let env = try #require(container["env"] as? [[String: Any]])
        func number(_ name: String) -> Int? { (env.first { $0["name"] as? String == name }?["value"] as? String).flatMap { Int($0) } }
        let shards = try #require(number("ID3METER_SHARDS"))
        let copies = try #require(number("ID3METER_COPIES"))
        #expect(copies >= 2, "every channel metered by two pods or more")
        #expect(set["replicas"] as? Int == shards * copies, "replicas = shards × copies")
        // Every pod the StatefulSet makes has a place, and each shard's copies are different pods.
        let placements = (0..<(shards * copies)).compactMap { Placement(ordinalOf: "id3-meter-\($0)", shards: shards, copies: copies) }
        #expect(placements.count == shards * copies)
        #expect(Dictionary(grouping: placements) { $0.shard?.index ?? -1 }.values.allSatisfy { Set($0.map(\.copy)).count == copies })

        // No two meters on one node (so no two copies of a shard); spread over zones where it can be.
        let antiAffinity = try #require((pod["affinity"] as? [String: Any])?["podAntiAffinity"] as? [String: Any])
        func selectsThePods(_ term: [String: Any]?) -> Bool {
            guard let labels = (term?["labelSelector"] as? [String: Any])?["matchLabels"] as? [String: String] else { return false }
            return !labels.isEmpty && labels.allSatisfy { podLabels[$0.key] == $0.value }
        }
        let required = try #require(antiAffinity["requiredDuringSchedulingIgnoredDuringExecution"] as? [[String: Any]])
        #expect(required.contains { $0["topologyKey"] as? String == "kubernetes.io/hostname" && selectsThePods($0) })
        let preferred = try #require(antiAffinity["preferredDuringSchedulingIgnoredDuringExecution"] as? [[String: Any]])
        #expect(preferred.contains {
            let term = $0["podAffinityTerm"] as? [String: Any]
            return term?["topologyKey"] as? String == "topology.kubernetes.io/zone" && selectsThePods(term)
        })
        // A drain takes fewer pods at a time than a shard has copies.
        let budget = try #require(manifests["PodDisruptionBudget"]?["spec"] as? [String: Any])
        #expect(selectsThePods(["labelSelector": budget["selector"] as Any]))
        #expect((budget["maxUnavailable"] as? Int).map { $0 < copies } == true, "\(budget)")
        #expect(budget["minAvailable"] == nil)
        // The API listens on all addresses: its tokens come from a Secret, and a NetworkPolicy limits who reaches it.
        #expect(flags["--listen"]?.hasPrefix("0.0.0.0") == true)
        let tokens = env.first { $0["name"] as? String == "ID3METER_API_TOKENS" }
        #expect(((tokens?["valueFrom"] as? [String: Any])?["secretKeyRef"] as? [String: Any])?["name"] as? String == "id3-meter-api-tokens")
        let policy = try #require(manifests["NetworkPolicy"])
        let policySpec = try #require(policy["spec"] as? [String: Any])
        #expect((policySpec["policyTypes"] as? [String]) == ["Ingress"])
        #expect(((policySpec["podSelector"] as? [String: Any])?["matchLabels"] as? [String: String])?["app.kubernetes.io/name"] == "id3-meter")

        // The paths: the line-up from the ConfigMap's volume, the rest on the pod's own claim.
        let mounts = try #require(container["volumeMounts"] as? [[String: Any]])
        func mount(_ volume: String) -> String? { mounts.first { $0["name"] as? String == volume }?["mountPath"] as? String }
        let claim = try #require(((set["volumeClaimTemplates"] as? [[String: Any]])?.first?["metadata"] as? [String: Any])?["name"] as? String)
        let data = try #require(mount(claim))
        for flag in ["--state", "--output", "--spool"] { #expect(flags[flag]?.hasPrefix(data + "/") == true, "\(flag) on the pod's volume") }
        // What the records and the spool may take fits the volume, with room for the state.
        func bytes(_ size: String?) -> Double? {
            guard let size, let number = Double(size.dropLast()) else { return nil }
            return number * ["K": 1024.0, "M": 1_048_576, "G": 1_073_741_824][String(size.last!), default: 0]
        }
        let records = try #require(bytes(flags["--output-max-size"])) * Double(1 + (Int(flags["--output-keep"] ?? "") ?? 1_000_000))
        let spool = try #require(bytes(flags["--spool-max-size"]))
        let storage = try #require(((((set["volumeClaimTemplates"] as? [[String: Any]])?.first?["spec"] as? [String: Any])?["resources"]
            as? [String: Any])?["requests"] as? [String: Any])?["storage"] as? String)
        let volume = try #require(bytes(String(storage.dropLast())))
        #expect(records + spool <= volume * 0.9, "records \(records) + spool \(spool) bytes fit the \(storage) volume with room")
        let volumes = try #require(pod["volumes"] as? [[String: Any]])
        let configVolume = try #require(volumes.first { $0["configMap"] != nil })
        let configMap = try #require(manifests["ConfigMap"])
        #expect((configVolume["configMap"] as? [String: Any])?["name"] as? String == (configMap["metadata"] as? [String: Any])?["name"] as? String)
        let lineupKey = try #require((configMap["data"] as? [String: String])?.keys.first)
        #expect(arguments[1] == "\(mount(configVolume["name"] as? String ?? "") ?? "?")/\(lineupKey)")
        let lineup = try LineupConfig.parse(try #require((configMap["data"] as? [String: String])?[lineupKey]), file: lineupKey)
        #expect(!lineup.channels.isEmpty)

        let rule = try #require(manifests["PrometheusRule"]?["spec"] as? [String: Any])
        let rules = try #require(try Yams.load(yaml: try Self.text("deploy/prometheus/id3-meter-rules.yaml")) as? [String: Any])
        #expect(NSDictionary(dictionary: rule).isEqual(to: rules), "make deploy writes the PrometheusRule from the rules file")
    }

    /// The runtime image installs a Debian package for every shared library the meter links or
    /// opens (found with readelf and dpkg on this Debian 12 machine), besides glibc and the C and C++
    /// runtimes every Debian image has; the Swift runtime is linked in statically there.
    @Test func theImageHasEveryLibraryTheMeterLinks() throws {
        let dockerfile = try Self.text("deploy/Dockerfile")
        let stages = dockerfile.split(separator: "\n").filter { $0.hasPrefix("FROM ") }
        #expect(stages.count == 2)
        #expect(stages.first?.contains("swift:") == true && stages.first?.contains("-bookworm") == true)
        #expect(stages.last == "FROM debian:bookworm-slim")
        #expect(dockerfile.contains("--static-swift-stdlib"))
        let runtime = try #require(dockerfile.components(separatedBy: "FROM debian:bookworm-slim").last)
        let installed = Set(runtime.matches(of: /install -y --no-install-recommends ([^\n\\&]+)/).flatMap {
            $0.output.1.split(separator: " ").map(String.init)
        })
        func run(_ tool: String, _ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            Command.watch(process)
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let needed = try run("/usr/bin/readelf", ["-d", Command.binary.path]).matches(of: /\(NEEDED\).*\[(.+)\]/).map { String($0.output.1) }
        // libav is not linked but opened when first needed: its soname is a string in the binary.
        let binary = try Data(contentsOf: Command.binary)
        let opened = ["avformat", "avcodec", "avutil"].compactMap { name -> String? in
            guard let found = binary.range(of: Data("lib\(name).so.".utf8)) else { return nil }
            return "lib\(name).so." + String(decoding: binary[found.upperBound...].prefix { (0x30...0x39).contains($0) }, as: UTF8.self)
        }
        #expect(opened == ["libavformat.so.59"])
        #expect(!needed.contains { $0.hasPrefix("libav") }, "libav is loaded on first use, not at start")
        // The MPD is read without FoundationXML, so neither it nor the system's libxml2 is linked.
        #expect(!needed.contains("libFoundationXML.so") && !needed.contains("libxml2.so.2"), "\(needed)")
        let native = Set(needed + opened)
            .filter { !$0.hasPrefix("libswift") && !$0.hasPrefix("libFoundation") && !["libdispatch.so", "libBlocksRuntime.so"].contains($0) }
        #expect(native.contains("libavformat.so.59"))
        let everywhere: Set = ["libc6", "libgcc-s1", "libstdc++6"]
        let libraries = try run("/sbin/ldconfig", ["-p"])
        for library in native {
            let path = try #require(libraries.firstMatch(of: try Regex("\\s\(NSRegularExpression.escapedPattern(for: library)) \\(libc6,x86-64.*\\) => (\\S+)"))?
                .output[1].substring, "\(library)")
            // With /lib merged into /usr/lib, dpkg knows a library by one of its names there.
            let real = URL(fileURLWithPath: String(path)).resolvingSymlinksInPath().path
            let names = [String(path), real, real.replacingOccurrences(of: "/usr/lib/", with: "/lib/")]
            let owner = try names.lazy.map { try run("/usr/bin/dpkg", ["-S", $0]) }.first { !$0.isEmpty }?
                .split(separator: ":").first.map(String.init) ?? "?"
            #expect(everywhere.contains(owner) || installed.contains(owner), "\(library) (\(owner)) is not installed in the image: \(installed)")
        }
    }
}

extension DeployTests {
    /// The Grafana dashboard asks only for what a live `serve` exports: every query, with its
    /// variables given values, is PromQL Prometheus parses (`promtool check rules`), and every
    /// series and label it names is on the /metrics of a real `serve` metering a live channel
    /// (labels a scrape adds, `job` and `instance`, aside).
    @Test(.timeLimit(.minutes(2))) func theDashboardAsksOnlyForSeriesALiveServeExports() async throws {
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Samples.root
            .appendingPathComponent("deploy/grafana/id3-meter-lineup.json"))) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        #expect(Set(panels.compactMap { $0["id"] as? Int }).count == panels.count, "panel ids are unique")
        let queries = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let lookups = variables.compactMap { $0["definition"] as? String }
        #expect(queries.count >= 20 && lookups.count == 2)
        // Grafana's variables as it would fill them.
        func filled(_ query: String) -> String {
            query.replacingOccurrences(of: "$__rate_interval", with: "5m").replacingOccurrences(of: "$channel", with: ".*")
                .replacingOccurrences(of: "$job", with: ".*")
        }

        // PromQL as Prometheus reads it.
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rules = folder.appendingPathComponent("dashboard-rules.yaml")
        try (["groups:", "  - name: dashboard", "    rules:"] + queries.enumerated().map { index, query in
            "      - record: dashboard:query_\(index)\n        expr: '\(filled(query).replacingOccurrences(of: "'", with: "''"))'"
        }).joined(separator: "\n").write(to: rules, atomically: true, encoding: .utf8)
        let checked = try Command.runTool("/usr/bin/promtool", ["check", "rules", rules.path])
        #expect(checked.status == 0 && checked.output.contains("SUCCESS"), "\(checked.output)")

        // A real serve metering a live channel, scraped once it has delivered.
        let server = try LineupServer(["a": ServeTests.channel(seed: 9)])
        defer { server.stop() }
        let config = folder.appendingPathComponent("lineup.yaml")
        try "defaults: {alert_after: 2, vod: true}\nchannels:\n  - {name: a, url: \"\(server.url("a"))\"}\n".write(to: config, atomically: true, encoding: .utf8)
        let (process, _, stderr) = try Command.launch(["serve", config.path, "--listen", "127.0.0.1:0", "--output", folder.appendingPathComponent("r.jsonl").path])
        defer { if process.isRunning { process.terminate() }; process.waitUntilExit() }
        let api = try #require(ServeCommandTests.apiAddress(from: stderr).address)
        var exposition = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !exposition.contains("id3meter_pacing_error_seconds_bucket") || exposition.contains("id3meter_tags_delivered_total{channel=\"a\"} 0") {
            exposition = (try? await ServeCommandTests.request("GET", "\(api)/metrics").body) ?? ""
            try await Task.sleep(for: .milliseconds(200))
        }
        // Each sample's name and its labels' names.
        var labels: [String: Set<String>] = [:]
        for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
            guard let name = line.firstMatch(of: /^[a-zA-Z_:][a-zA-Z0-9_:]*/).map({ String($0.output) }) else { continue }
            labels[name, default: []].formUnion(line.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="/).map { String($0.output.1) })
        }
        #expect(labels["id3meter_tags_delivered_total"] != nil, "\(exposition.prefix(2_000))")
        let scraped: Set<String> = ["job", "instance"]
        for query in queries + lookups {
            let series = query.matches(of: /\b((?:id3meter|process)_[a-z_]+)\b/).map { String($0.output.1) }
            #expect(!series.isEmpty, "\(query)")
            for name in series { #expect(labels[name] != nil, "\(name) (in \(query)) is not on serve's /metrics") }
            let known = series.reduce(into: scraped) { $0.formUnion(labels[$1] ?? []) }
            let matchers = query.matches(of: /([a-z_]+)\s*(?:=~|!~|!=|=)\s*"/).map { String($0.output.1) }
            let grouped = query.matches(of: /\b(?:by|on)\s*\(([^)]*)\)/).flatMap { $0.output.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            let lookedUp = query.matches(of: /label_values\([^,]+,\s*([a-z_]+)\)/).map { String($0.output.1) }
            for label in matchers + grouped + lookedUp where !label.isEmpty {
                #expect(known.contains(label), "label \(label) (in \(query)) is on none of \(series)")
            }
        }
    }
}
