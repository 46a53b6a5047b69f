import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import ID3Meter
import ID3MeterReport
import NIOCore
import Prometheus
import Synchronization

/// `serve`'s HTTP API: health, the channels and their state, adding, replacing and ending a
/// channel, and the Prometheus metrics.
public struct LineupAPI: Sendable {
    public let lineup: Lineup
    public let registry: PrometheusCollectorRegistry
    /// This instance's share of the line-up and which copy of it.
    public let placement: Placement
    /// The name this instance's records carry as `meter`.
    public let meter: String?
    private var shard: Shard? { placement.shard }
    private let process: ProcessMetrics
    private let outputMetrics: OutputMetrics?
    private let policy: APIPolicy
    private let connections: APIConnections
    /// How often the live page asks for `GET /timeline`, in seconds.
    static let pageRefresh = 5
    private static let page = TimelinePage.live(dataPath: "timeline", refresh: pageRefresh)

    /// The collector's database the live page links each channel's recent days to, and the
    /// zone its days are in.
    private let reports: (database: ReportDatabase, calendar: ReportCalendar)?
    /// How many days a channel's link shows, and the most `GET /report?days=` takes.
    static let reportDays = 7
    static let mostReportDays = 31
    /// One report is made at a time: a month of a line-up holds a channel's month in memory and
    /// reads for seconds, and a metering process must not be made to hold several.
    private let reporting = OneAtATime()

    private final class OneAtATime: Sendable {
        private let busy = Mutex(false)
        /// Whether the caller may go on; it then calls `leave` when done.
        func enter() -> Bool { busy.withLock { busy in defer { busy = true }; return !busy } }
        func leave() { busy.withLock { $0 = false } }
    }

    /// `outputs`, when given, have their counts in `/metrics`; with `reports` (a collector's
    /// database and the operator's zone), `GET /report` serves its days and the live page links them.
    /// `outputs`, when given, have their counts in `/metrics`.
    public init(lineup: Lineup, registry: PrometheusCollectorRegistry, placement: Placement = .wholeLineup, meter: String? = nil,
                outputs: OutputSet? = nil, policy: APIPolicy = APIPolicy()) {
        self.init(lineup: lineup, registry: registry, placement: placement, meter: meter, outputs: outputs, policy: policy, reports: nil)
    }

    package init(lineup: Lineup, registry: PrometheusCollectorRegistry, placement: Placement = .wholeLineup, meter: String? = nil,
                 outputs: OutputSet? = nil, policy: APIPolicy = APIPolicy(), reports: (database: ReportDatabase, calendar: ReportCalendar)?) {
        self.reports = reports
        self.lineup = lineup
        self.policy = policy
        connections = APIConnections(maximum: policy.maximumConnections, registry: registry)
        self.registry = registry
        self.placement = placement
        self.meter = meter
        process = ProcessMetrics(registry: registry)
        outputMetrics = outputs.map { OutputMetrics(outputs: $0, registry: registry) }
        // Which share of the line-up this instance meters and which copy of it, as an info
        // series; the copy count as a value too, for a rule to compare with the copies that
        // report a channel (PromQL cannot read a number from a label).
        registry.gauge("id3meter_shard_info", labels: [("shard", placement.shard.map { String($0.index) } ?? "0"),
                                                       ("shards", placement.shard.map { String($0.count) } ?? "1"),
                                                       ("copy", placement.copy.map(String.init) ?? ""),
                                                       ("meter", meter ?? "")]).set(1.0)
        registry.gauge("id3meter_copies").set(Double(placement.copies))
    }

    /// Brings the series that move with time and the outputs' counts up to date: what a
    /// scrape of `/metrics` does first.
    public func refreshMetrics() async {
        await lineup.refreshGauges()
        process.refresh()
        await outputMetrics?.refresh()
    }

    public func router() -> Router<APIContext> {
        let router = Router(context: APIContext.self)
        router.add(middleware: APIMethods { path in
            switch path {
            case let path where APIServer.probePaths.contains(path): [.get, .head]
            case "/", "/timeline", "/report", "/channels": [.get]
            case let path where path.hasPrefix("/channels/"): [.put, .delete]
            default: nil
            }
        })
        router.add(middleware: APIAccess(tokens: policy.tokens))
        APIServer.addProbes(to: router, registry: registry) { [self] in await refreshMetrics() }
        // The live page: the line-up's state and each channel's last hour, drawn by the same
        // script as the scan's HTML report from `GET /timeline`.
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: Self.page)))
        }
        router.get("timeline") { [reports] _, _ in
            var view = LineupView(generated: Date(), placement: placement, meter: meter,
                                  channels: await lineup.timelines.map { ChannelView($0.status, timeline: $0.timeline) })
            view.reports = reports == nil ? nil : Self.reportDays
            return Self.json(view)
        }
        // A channel's recent days from the collector's database (docs/REPORT.md): the live
        // page's link. Read access, as the rest of the page.
        router.get("report") { [reports, reporting, logger = lineup.logger] request, _ in
            guard let reports else { return Self.text("no --report-database is configured\n", status: .notFound) }
            guard reporting.enter() else {
                var response = Self.text("a report is being made; ask again shortly\n", status: .serviceUnavailable)
                response.headers[.retryAfter] = "5"
                return response
            }
            defer { reporting.leave() }
            let days = request.uri.queryParameters.get("days").map { Int($0) } ?? Self.reportDays
            guard let days, (1...Self.mostReportDays).contains(days) else {
                return Self.text("days: a number from 1 to \(Self.mostReportDays)\n", status: .badRequest)
            }
            let now = Date().timeIntervalSince1970
            let channels = request.uri.queryParameters.getAll("channel").map { String($0) }
            let builder = CoverageBuilder(calendar: reports.calendar, now: now)
            guard let range = reports.calendar.days(ending: reports.calendar.day(of: now), count: days) else {
                return Self.text("no such days\n", status: .badRequest)
            }
            do {
                let report = try await reports.database.report(days: range, builder: builder, channels: channels.isEmpty ? nil : Set(channels),
                                                               logger: logger)
                return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                                body: ResponseBody(byteBuffer: ByteBuffer(string: report.html())))
            } catch {
                logger.warning("GET /report: \(error)")
                return Self.text("the collector's database cannot be read now: \(error)\n", status: .serviceUnavailable)
            }
        }
        router.get("channels") { _, _ in
            Self.json(LineupView(placement: placement, meter: meter, channels: await lineup.statuses.map { ChannelView($0) }))
        }
        router.put("channels/:name") { request, context in
            let name = try context.parameters.require("name")
            let body = try await request.body.collect(upTo: APIPolicy.maximumBodyBytes)
            var channel: ChannelConfig
            let config = await lineup.config
            do {
                channel = try config.channel(from: String(buffer: body), source: "PUT /channels/\(name)")
            } catch {
                return Self.problem(.badRequest, "\(error)")
            }
            if let refusal = await Self.refusal(of: channel, schemes: policy.schemes, hosts: config.apiHosts) { return Self.problem(.badRequest, refusal) }
            channel.addedOverAPI = true
            channel.hostRule = Fetcher.HostRule(allowed: config.apiHosts)
            guard channel.name == name else {
                return Self.problem(.badRequest, "the body names channel '\(channel.name)', the path '\(name)'")
            }
            // Metered here too, it would be metered twice: the instance that holds it takes it.
            if let shard, !shard.holds(name) {
                let owner = Shard.owner(of: name, count: shard.count)
                return Self.problem(.conflict, "channel '\(name)' belongs to shard \(owner)/\(shard.count), not this one (\(shard))")
            }
            let previous = await lineup.channel(name)
            if previous == nil, await lineup.count >= policy.maximumChannels {
                return Self.problem(.tooManyRequests, "the line-up holds \(policy.maximumChannels) channels, its most (--max-channels)")
            }
            if await lineup.put(channel) {
                await lineup.audit(previous == nil ? "add" : "replace", channel: name, by: context.caller ?? "local",
                                   old: previous?.url, new: channel.url)
            }
            return Self.json(["channel": name], status: previous == nil ? .created : .ok)
        }
        router.delete("channels/:name") { _, context in
            let name = try context.parameters.require("name")
            let previous = await lineup.channel(name)
            guard await lineup.remove(name) else { return Self.problem(.notFound, "no channel '\(name)'") }
            await lineup.audit("delete", channel: name, by: context.caller ?? "local", old: previous?.url, new: nil)
            return Response(status: .noContent)
        }
        return router
    }

    /// The HTTP/1.1 server the router runs on (`APIServer`), over TLS when `tls` is given.
    public func server(tls: TLSConfiguration? = nil) throws -> HTTPServerBuilder {
        try APIServer.builder(connections: connections, policy: policy, tls: tls)
    }

    /// Headers a channel may not set: they would break or redirect its requests.
    static let forbiddenHeaders: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

    /// Why a channel from the API may not run: only `schemes` (http(s) unless the operator
    /// allowed more), no forbidden header, no host on loopback or a private network unless
    /// `hosts` allows it; `nil` when it may.
    static func refusal(of channel: ChannelConfig, schemes: Set<String>, hosts: [String]) async -> String? {
        guard let url = URL(string: channel.url), let scheme = url.scheme?.lowercased(), schemes.contains(scheme) else {
            let allowed = schemes.sorted().joined(separator: ", ")
            return "a channel added over the API must be a URL of \(allowed) (--api-allow-scheme adds others), not '\(channel.url)'"
        }
        if let header = channel.headers.first(where: { forbiddenHeaders.contains($0.name.lowercased()) }) {
            return "a channel may not set the \(header.name) header"
        }
        guard let host = url.host, !host.isEmpty else {
            // A scheme the operator allowed may name no host (file:); http(s) must.
            return ["http", "https"].contains(scheme) ? "'\(channel.url)' names no host" : nil
        }
        return await Fetcher.HostRule(allowed: hosts).refusal(of: host)
    }

    private static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let bytes = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes + [0x0A])))
    }

    private static func problem(_ status: HTTPResponse.Status, _ reason: String) -> Response {
        json(["error": reason], status: status)
    }
}

/// What `GET /channels` shows: this instance's shard (`I/N`, absent when not sharded), its copy
/// (from 0, when known) of how many, its `meter` name and its channels; `GET /timeline` adds when
/// it was made and each channel's timeline.
struct LineupView: Encodable {
    var generated: Date?
    var shard: String?
    var copy: Int?
    var copies: Int
    var meter: String?
    /// With a collector's database configured: how many recent days a channel's link shows.
    var reports: Int?
    var channels: [ChannelView]

    init(generated: Date? = nil, placement: Placement, meter: String?, channels: [ChannelView]) {
        self.generated = generated
        shard = placement.shard?.description
        copy = placement.copy
        copies = placement.copies
        self.meter = meter
        self.channels = channels
    }
}

/// A channel as `GET /channels` shows it.
struct ChannelView: Encodable {
    var name: String
    var state: String
    var lastTag: Date?
    var lastTagAgeSeconds: Double?
    var delivered: Int
    var invalid: Int
    var placeholder: Int
    var segmentsRead: Int
    var segmentsFailed: Int
    var segmentsGap: Int
    var playlistReloadFailures: Int
    var restarts: Int
    var stallSeconds: Double
    var alerts: [String]
    var failingChecks: [String]
    var renditionsDiffering: [String]
    /// `file` or `api`: where the channel came from.
    var source: String
    var timeline: TagTimeline?

    init(_ status: ChannelStatus, timeline: TagTimeline? = nil) {
        self.timeline = timeline
        name = status.name
        state = status.state.rawValue
        lastTag = status.lastTag
        lastTagAgeSeconds = status.lastTag.map { Date().timeIntervalSince($0) }
        delivered = status.delivered
        invalid = status.invalid
        placeholder = status.placeholder
        segmentsRead = status.segmentsRead
        segmentsFailed = status.segmentsFailed
        segmentsGap = status.segmentsGap
        playlistReloadFailures = status.playlistReloadFailures
        restarts = status.restarts
        stallSeconds = status.stallSeconds
        alerts = status.alerts.sorted().map(\.rawValue)
        failingChecks = status.failingChecks
        renditionsDiffering = status.renditionsDiffering
        source = status.source
    }

    enum CodingKeys: String, CodingKey {
        case name, state, lastTag = "last_tag", lastTagAgeSeconds = "last_tag_age_seconds", delivered, invalid, placeholder
        case segmentsRead = "segments_read", segmentsFailed = "segments_failed", segmentsGap = "segments_gap"
        case playlistReloadFailures = "playlist_reload_failures", restarts, stallSeconds = "stall_seconds", alerts
        case failingChecks = "failing_checks", renditionsDiffering = "renditions_differ", source, timeline
    }
}
