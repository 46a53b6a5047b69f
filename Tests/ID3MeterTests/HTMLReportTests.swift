import Foundation
import Logging
import Testing
@testable import ID3MeterCore
@testable import ID3MeterReport
import SampleGenerator
@testable import ID3MeterServe

/// The HTML QA report as a person sees it: written by the real binary, drawn by a real headless
/// chromium, its DOM read back and held to the sample writer's ground truth.
@Suite("HTML report in a browser", .serialized, .timeLimit(.minutes(3)))
struct HTMLReportTests {
    /// Where `make screenshots` has the tests leave their screenshots (docs/images); a temporary folder otherwise.
    static func screenshot(_ png: Data, named name: String) throws {
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "a PNG of a drawn page")
        let folder = ProcessInfo.processInfo.environment["ID3METER_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory
        try png.write(to: folder.appendingPathComponent(name))
    }

    /// The marks, regions and breaks a timeline drew, as the DOM has them.
    static let drawn = """
        [...document.querySelectorAll("section.source")].map(section => ({
          source: section.dataset.source,
          marks: [...section.querySelectorAll("g.mark")].map(g => ({ kind: g.dataset.kind, pts: Number(g.dataset.pts), t: Number(g.dataset.t),
            x: Number((g.querySelector("circle") || g).getBBox().x + (g.querySelector("circle") || g).getBBox().width / 2), y: g.getBBox().y })),
          spans: [...section.querySelectorAll("g.span")].map(g => ({ kind: g.dataset.kind, from: Number(g.dataset.from), to: Number(g.dataset.to),
            seconds: Number(g.dataset.seconds), left: g.querySelector("rect").x.baseVal.value, right: g.querySelector("rect").x.baseVal.value + g.querySelector("rect").width.baseVal.value })),
          breaks: [...section.querySelectorAll("g.break")].map(g => Number(g.dataset.t)),
          bins: [...section.querySelectorAll("g.bin")].map(g => Number(g.dataset.count)),
          note: (section.querySelector("p.note") || {}).textContent || ""
        }))
        """

    struct Drawn: Decodable {
        struct Mark: Decodable { var kind: String; var pts: Int64; var t: Double; var x: Double; var y: Double }
        struct Span: Decodable { var kind: String; var from: Double; var to: Double; var seconds: Double; var left: Double; var right: Double }
        var source: String
        var marks: [Mark]
        var spans: [Span]
        var breaks: [Double]
        var bins: [Int]
        var note: String
    }

    static func drawn(_ browser: HeadlessBrowser, _ session: String) throws -> [Drawn] {
        let value = try browser.evaluate("JSON.stringify(\(drawn))", session: session) as? String ?? "[]"
        return try JSONDecoder().decode([Drawn].self, from: Data(value.utf8))
    }

    /// Writes `qa`'s HTML page and opens it in a browser of its own, for `body` (off the pool).
    static func open(_ qa: QAReport, width: Int = 1280, height: Int = 900,
                     _ body: @escaping @Sendable (HeadlessBrowser, _ session: String) throws -> Void) async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("report.html")
        try Data(qa.html().utf8).write(to: page)
        try await offThePool {
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            try body(browser, try browser.open(page.absoluteString, width: width, height: height))
        }
    }

    static func scanReport(_ inputs: [String], in folder: URL) throws -> URL {
        let report = folder.appendingPathComponent("qa.html")
        let result = try Command.run(["scan", "--quiet", "--report", report.path] + inputs)
        #expect(result.status == 0, "\(result.stderr)")
        return report
    }

    @Test func theDefectsReportDrawsEveryTagAndGapWhereTheWriterPutThem() async throws {
        let planted = try JSONDecoder().decode(PlantedDefects.self, from: Data(contentsOf: URL(fileURLWithPath: Samples.path("qa/defects.planted.json"))))
        #expect(planted == PlantedDefects.stream().defects, "the sample's list is its writer's")
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = try Self.scanReport([Samples.path("qa/defects.ts"), Samples.path("hls/master.m3u8")], in: folder)

        try await offThePool {
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            let session = try browser.open(report.absoluteString)
            try browser.waitUntil("document.querySelectorAll('section.source svg.timeline').length === 2", session: session)
            let sources = try Self.drawn(browser, session)
            let defects = try #require(sources.first { $0.source.hasSuffix("defects.ts") })

            // One mark per tag, in stream order, of the kind the writer made it.
            #expect(defects.marks.map(\.pts) == planted.tags)
            for mark in defects.marks {
                let kind = planted.placeholder.contains(mark.pts) ? "placeholder" : planted.invalid.contains(mark.pts) ? "invalid" : "valid"
                #expect(mark.kind == kind, "\(mark.pts)")
            }
            // Within one run of PTS, the distance on the axis is the distance in PTS.
            let run = defects.marks.prefix { !planted.discontinuities.contains($0.pts) }
            #expect(run.count >= 2)
            for (before, after) in zip(run, run.dropFirst()) {
                #expect(abs((after.t - before.t) - Double(after.pts - before.pts) / 90_000) < 0.001)
            }
            // One region per flagged gap, from the tag before to the tag that ends it, drawn there.
            #expect(defects.spans.map(\.kind) == ["long", "short"] && planted.longGaps.count + planted.shortGaps.count == 2)
            for (span, end) in zip(defects.spans, planted.longGaps + planted.shortGaps) {
                let closing = try #require(defects.marks.firstIndex { $0.pts == end })
                let opening = defects.marks[closing - 1]
                #expect(span.from == opening.t && span.to == defects.marks[closing].t)
                #expect(abs(span.seconds - Double(end - opening.pts) / 90_000) < 0.001)
                #expect(abs(span.left - opening.x) < 1 && abs(span.right - defects.marks[closing].x) < 1)
            }
            #expect(defects.spans.first?.seconds == planted.longestGap)
            // The encoder restart: a break where the PTS went back.
            let restart = try #require(defects.marks.first { planted.discontinuities.contains($0.pts) })
            #expect(defects.breaks == [restart.t])
            // Readable without colour: each kind on a lane of its own.
            let lanes = Dictionary(grouping: defects.marks, by: \.kind).mapValues { Set($0.map(\.y)) }
            #expect(lanes.values.allSatisfy { $0.count == 1 } && Set(lanes.values.map { $0.first! }).count == 3)

            // The HLS source: every segment the sample left without a tag is a region, named.
            let hls = try #require(sources.first { $0.source.hasSuffix("master.m3u8") })
            let expected = try Samples.expected("hls/expected.jsonl").filter(\.nielsen)
            let tagged = Set(expected.compactMap(\.segment))
            let playlist = try String(contentsOfFile: Samples.path("hls/low/low.m3u8"), encoding: .utf8)
            let untagged = playlist.split(separator: "\n").filter { $0.hasSuffix(".ts") && !tagged.contains(String($0)) }
            #expect(hls.spans.filter { $0.kind == "empty" }.count == untagged.count)
            #expect(hls.marks.map(\.pts) == expected.compactMap(\.pts))
            #expect(hls.note.contains("PROGRAM-DATE-TIME"))

            // The summary links each source to its timeline; opening a mark shows its payload fields.
            let links = try browser.evaluate("[...document.querySelectorAll('table.summary a')].map(a => document.querySelector(a.getAttribute('href')).dataset.source)", session: session) as? [String]
            #expect(links?.count == 2 && links?.first?.hasSuffix("defects.ts") == true)
            // The checks as the Validator words them, one row each over both sources; each source
            // says the results that are not a clean pass.
            let rows = try browser.evaluate("""
                [...document.querySelectorAll('table.checks tbody tr')].map(row => [...row.children].map(cell => cell.textContent).join('|'))
                """, session: session) as? [String] ?? []
            #expect(rows.contains { $0.hasPrefix("5|tag duration|2|0|0|proxy:") }, "\(rows)")
            #expect(rows.contains("–|duplicates|1|1|0|no payload twice"), "\(rows)")
            #expect(rows.contains { $0.hasPrefix("3|sequence number|0|0|2|needs Nielsen's keys") }, "\(rows)")
            let results = try browser.evaluate("document.querySelector('section.source p.checks').textContent", session: session) as? String ?? ""
            let spacing = planted.shortGaps.count + planted.longGaps.count
            #expect(results.contains("tag_duration: Pass <\(spacing)/0/7>") && results.contains("duplicates: Fail <\(planted.duplicates.count)/0/0>"),
                    "\(results)")
            let detail = try browser.evaluate("""
                (() => { document.querySelector("section.source g.mark-i").dispatchEvent(new MouseEvent("click", { bubbles: true }));
                         return document.querySelector("section.source .detail").textContent; })()
                """, session: session) as? String ?? ""
            #expect(detail.contains("PTS\(planted.invalid[0])") && detail.contains("Breakout01"), "\(detail)")

            let log = browser.log(session: session)
            #expect(log.errors.isEmpty, "\(log.errors)")
            #expect(log.requests == [report.absoluteString], "the page fetches nothing: \(log.requests)")

            // At phone width nothing sticks out sideways but the table, which scrolls in its own box.
            try browser.send("Emulation.setDeviceMetricsOverride", ["width": 390, "height": 800, "deviceScaleFactor": 1, "mobile": true], session: session)
            try browser.waitUntil("document.querySelector('svg.timeline').getAttribute('width') <= 390", session: session)
            #expect(try browser.evaluate("document.documentElement.scrollWidth", session: session) as? Int ?? 0 <= 390)
            try browser.send("Emulation.setDeviceMetricsOverride", ["width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": false], session: session)
            try browser.waitUntil("document.querySelector('svg.timeline').getAttribute('width') > 1100", session: session)
            try Self.screenshot(browser.screenshot(session: session, width: 1200), named: "qa-report.png")
        }
    }

    /// `--all-renditions`: a table of the ladder, each row's verdict, its name linking to that
    /// rendition's own timeline strip (the stripped variant's ends at its last tag).
    @Test func aLadderIsATableAndAStripPerRendition() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("qa.html")
        let result = try Command.run(["scan", "--quiet", "--all-renditions", "--report", report.path, Samples.path("ladder/master-faulty.m3u8")])
        #expect(result.status == 0, "\(result.stderr)")
        try await offThePool {
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            let session = try browser.open(report.absoluteString)
            try browser.waitUntil("document.querySelectorAll('section.source svg.timeline').length === 3", session: session)
            let rows = try browser.evaluate("""
                [...document.querySelectorAll('table.renditions tbody tr')].map(tr => [tr.className, tr.querySelector('th').textContent, \
                tr.lastElementChild.textContent, document.querySelector(tr.querySelector('a').getAttribute('href')).dataset.source])
                """, session: session) as? [[String]] ?? []
            #expect(rows.map { $0[0] } == ["", "fail", "fail"], "\(rows)")
            #expect(rows.map { Location.name($0[1]) } == ["v0.m3u8", "stripped.m3u8", "shifted.m3u8"])
            #expect(rows.count == 3 && rows[1][2] == "2 tags the other renditions carry missing (segments seg3.ts to seg5.ts)")
            #expect(rows.count == 3 && rows[2][2].hasPrefix("tags 0.500 s after the other renditions'"))
            #expect(rows.allSatisfy { $0[3].hasSuffix("[\($0[1])]") }, "each links to its rendition's timeline")
            let sources = try Self.drawn(browser, session)
            #expect(sources.map(\.marks.count) == [4, 2, 4])
            #expect(browser.log(session: session).errors.isEmpty)
        }
    }

    @Test func aRequestingPageIsCaughtByTheSameCheck() async throws {
        // The check above holds only if it sees requests: a page with one image from a local server shows it.
        let server = try LocalHTTPServer { _ in LocalHTTPServer.Response(status: 404) }
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("fetches.html")
        try Data("<!DOCTYPE html><p>x</p><img src=\"\(server.url("pixel.png"))\">".utf8).write(to: page)
        try await offThePool {
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            let session = try browser.open(page.absoluteString)
            #expect(browser.log(session: session).requests == [page.absoluteString, server.url("pixel.png")])
        }
    }

    @Test func namesFromAStreamStayText() async throws {
        // A source or segment name is the stream's to choose: it must never become markup.
        let hostile = #"</script><img src=x onerror="document.title='owned'"><!--"#
        var builder = SourceReportBuilder(source: hostile, timeline: TimelineRecorder(details: .latest(10)))
        var tags = TimelineTests.Tags()
        let segment = TagOrigin.Segment(uri: hostile + ".ts", mediaSequence: 0, startPTS: 0, duration: 6)
        builder.add(try tags.tag(pts: 90_000, segment: segment))
        builder.add(.segment(segment))
        builder.add(.segment(TagOrigin.Segment(uri: hostile + "2.ts", mediaSequence: 1, startPTS: 540_000, duration: 6)))
        var qa = QAReport()
        qa.add(builder.report)
        try await Self.open(qa) { browser, session in
            try browser.waitUntil("document.querySelectorAll('svg.timeline').length === 1", session: session)
            #expect(try browser.evaluate("document.querySelectorAll('img').length", session: session) as? Int == 0)
            #expect(try browser.evaluate("document.title", session: session) as? String == "Nielsen tag QA report")
            #expect(try browser.evaluate("document.querySelector('section h2').textContent", session: session) as? String == hostile)
            let empty = try browser.evaluate("document.querySelector('g.span-empty title').textContent", session: session) as? String ?? ""
            #expect(empty.hasSuffix("(" + hostile + "2.ts)"), "\(empty)")
            #expect(browser.log(session: session).errors.isEmpty)
        }
    }

    @Test func aLargeReportDrawsAsItScrollsAndAllOfItForPrint() async throws {
        var qa = QAReport()
        var tags = TimelineTests.Tags()
        let sources = 220  // past the 200 a page draws at once
        for index in 0..<sources {
            var builder = SourceReportBuilder(source: "source-\(index).ts", timeline: TimelineRecorder(details: .latest(0)))
            for second in 0..<5 { builder.add(try tags.tag(pts: Int64(second) * 900_000)) }
            qa.add(builder.report)
        }
        try await Self.open(qa, width: 1000, height: 800) { browser, session in
            try browser.waitUntil("document.querySelectorAll('table.summary tbody tr').length === \(sources)", session: session)
            // Following a link from the summary draws the timelines there.
            _ = try browser.evaluate("document.querySelector('a[href=\"#source-110\"]').click()", session: session)
            try browser.waitUntil("document.querySelector('#source-110 svg.timeline') !== null", session: session)
            let onScreen = try browser.evaluate("document.querySelectorAll('svg.timeline').length", session: session) as? Int ?? 0
            #expect(onScreen < sources / 4, "only what is near the screen is drawn: \(onScreen)")
            let pdf = try browser.send("Page.printToPDF", [:], session: session, timeout: 90)["data"] as? String ?? ""
            #expect(Data(base64Encoded: pdf)?.starts(with: Array("%PDF".utf8)) == true)
            #expect(try browser.evaluate("document.querySelectorAll('svg.timeline').length", session: session) as? Int == sources,
                    "printing draws every timeline")
            #expect(try browser.evaluate("document.querySelectorAll('g.mark').length", session: session) as? Int == sources * 5)
            #expect(browser.log(session: session).errors.isEmpty)
        }
    }

    @Test func aDenseSourceIsDrawnInBinsAndThePageSaysSo() async throws {
        var builder = SourceReportBuilder(source: "dense.ts", timeline: TimelineRecorder(details: .budget(DetailBudget(limit: 100))))
        var tags = TimelineTests.Tags()
        let count = 20_000
        for index in 0..<count { builder.add(try tags.tag(pts: Int64(index) * 90_000, placeholder: index % 1_000 == 0)) }
        var qa = QAReport()
        qa.add(builder.report)
        #expect(qa.html().utf8.count < 200_000, "20,000 tags in bins: \(qa.html().utf8.count) bytes")
        try await Self.open(qa) { browser, session in
            try browser.waitUntil("document.querySelectorAll('svg.timeline').length === 1", session: session)
            let dense = try #require(try Self.drawn(browser, session).first)
            #expect(dense.marks.isEmpty && dense.bins.count <= TimelineRecorder.binCount)
            #expect(dense.bins.reduce(0, +) == count)
            #expect(dense.note.contains("20000 tags are drawn as \(dense.bins.count) marks"), "\(dense.note)")
            #expect(dense.spans.count == 1, "the short gaps of a tag a second, merged")
            #expect(browser.log(session: session).errors.isEmpty)
        }
    }
}

/// `serve`'s live page, from a real `serve` process metering a local line-up, in a real browser.
@Suite("Live line-up page in a browser", .serialized, .timeLimit(.minutes(3)))
struct LivePageTests {
    @Test func theLivePageShowsTheLineupAndUpdatesWithoutReloading() async throws {
        // Channel a: a tag every 4 s, none in segments 3 to 5 (a 16 s gap); b: tags throughout.
        func channel(seed: UInt64, untagged: Range<Int>) -> LiveChannel {
            LiveChannel(preroll: 3) { date in
                var stream = LiveStream(segmentDuration: 4, tagInterval: 4, windowSize: 6, segmentCount: 30, startDate: date)
                stream.seed = seed
                stream.untagged = untagged
                return stream
            }
        }
        let server = try LineupServer(["a": channel(seed: 1, untagged: 3..<6), "b": channel(seed: 2, untagged: 0..<0)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("lineup.yaml")
        // Alerting after 8 s, channel a alerts during its gap.
        try Data("defaults: {alert_after: 8}\nchannels:\n  - {name: a, url: \"\(server.url("a"))\"}\n  - {name: b, url: \"\(server.url("b"))\"}\n".utf8).write(to: config)
        // One of two copies of the whole line-up, named: the page says so.
        let (process, _, err) = try Command.launch(["serve", config.path, "--listen", "127.0.0.1:0", "--shard", "0/1", "--copies", "2",
                                                    "--meter", "meter-b"])
        defer { if process.isRunning { process.terminate() } }
        let api = try #require(ServeCommandTests.apiAddress(from: err).address)

        try await offThePool {
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            let session = try browser.open(api + "/")
            // Every alert the table ever shows, as the page updates.
            _ = try browser.evaluate("""
                window.alertsSeen = new Set();
                new MutationObserver(() => document.querySelectorAll("tr[data-channel] .badge.fail").forEach(badge =>
                  window.alertsSeen.add(badge.closest("tr").dataset.channel + ": " + badge.textContent))
                ).observe(document.getElementById("page"), { childList: true, subtree: true });
                """, session: session)
            let marksOfA = "document.querySelectorAll('section[data-source=\"a\"] g.mark').length"
            try browser.waitUntil("Number(document.body.dataset.updates) >= 1 && \(marksOfA) > 0", session: session, timeout: 40)
            // A reload would forget this; an update keeps it.
            let before = try browser.evaluate("window.sameDocument = true; [Number(document.body.dataset.updates), \(marksOfA)]", session: session) as? [Int] ?? []
            try browser.waitUntil("Number(document.body.dataset.updates) > \(before[0]) && \(marksOfA) > \(before[1])", session: session, timeout: 30)
            // Wait for the tagless stretch to have been read and drawn.
            do {
                try browser.waitUntil("document.querySelectorAll('section[data-source=\"a\"] g.span-long').length > 0", session: session, timeout: 90)
            } catch {
                let running = process.isRunning
                let log = running ? "" : String(decoding: err.fileHandleForReading.readDataToEndOfFile().prefix(4_000), as: UTF8.self)
                Issue.record("\(error); serve \(running ? "runs" : "ended \(process.terminationStatus): \(log)")")
                throw error
            }
            #expect(try browser.evaluate("window.sameDocument === true", session: session) as? Bool == true, "updated in place, not reloaded")
            let status = try browser.evaluate("document.querySelector('p.updated').textContent", session: session) as? String ?? ""
            #expect(status.contains("2 channels, shard 0/1, one of 2 copies (meter-b). Refreshes every 5 s."), "\(status)")
            try browser.waitUntil("window.alertsSeen.has('a: no tags')", session: session, timeout: 30)

            let rows = try browser.evaluate("[...document.querySelectorAll('table.summary tbody tr')].map(tr => tr.dataset.channel + ' ' + tr.cells[1].textContent)", session: session) as? [String]
            #expect(rows?.count == 2 && rows?.allSatisfy { $0.hasSuffix("playing") || $0.hasSuffix("joining") || $0.hasSuffix("stalled") } == true, "\(rows ?? [])")

            let stream = try #require(server.channels["a"]?.liveStream)
            let segmentOf = Dictionary(uniqueKeysWithValues: (0..<30).flatMap { index in stream.tags(inSegment: index).map { ($0.pts, index) } })
            let drawn = try #require(try HTMLReportTests.drawn(browser, session).first { $0.source == "a" })
            // Every mark is a tag the stream carried, each once, in order.
            #expect(drawn.marks.allSatisfy { segmentOf[$0.pts] != nil }, "\(drawn.marks.map(\.pts))")
            #expect(drawn.marks.map(\.pts) == drawn.marks.map(\.pts).sorted() && Set(drawn.marks.map(\.pts)).count == drawn.marks.count)
            // Tags 4 s apart are no finding; the one gap the stream has is drawn from tag to tag.
            let long = drawn.spans.filter { $0.kind == "long" }
            #expect(long.count == 1 && drawn.spans.filter { $0.kind == "short" }.isEmpty)
            let closing = try #require(drawn.marks.firstIndex { segmentOf[$0.pts] == 6 })
            #expect(long.first.map { [$0.from, $0.to] } == [drawn.marks[closing - 1].t, drawn.marks[closing].t])
            #expect(abs((long.first?.seconds ?? 0) - Double(drawn.marks[closing].pts - drawn.marks[closing - 1].pts) / 90_000) < 0.001)
            // The tagless segments, each a region of its own.
            let empty = try browser.evaluate("[...document.querySelectorAll('section[data-source=\"a\"] g.span-empty title')].map(t => t.textContent)", session: session) as? [String] ?? []
            #expect(empty.count == 3 && zip(empty, 3..<6).allSatisfy { $0.hasSuffix("/a/seg\($1).ts)") }, "\(empty)")

            // Without a collector's database, no channel links to days.
            #expect(try browser.evaluate("document.querySelectorAll('a.days').length", session: session) as? Int == 0)
            let log = browser.log(session: session)
            #expect(log.errors.isEmpty, "\(log.errors)")
            #expect(log.requests.allSatisfy { $0.hasPrefix(api + "/") } && log.requests.filter { $0 == api + "/timeline" }.count >= 2, "\(log.requests)")
            try HTMLReportTests.screenshot(browser.screenshot(session: session, width: 1200), named: "live-lineup.png")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// With the collector's database (`--report-database`), each channel of the live page links
    /// to its last 7 days there, and the link answers with that channel's report.
    @Test func theLivePageLinksEachChannelToItsDaysInTheCollectorsDatabase() async throws {
        let server = try LineupServer(["a": ServeTests.channel(seed: 3), "b": ServeTests.channel(seed: 4)])
        defer { server.stop() }
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The collector's database: an hour ago, channel a's tags every 10 s for 5 minutes, then none.
        let database = folder.appendingPathComponent("records.db").path
        let store = try await SQLiteRecordStore.open(path: database, logger: Logger(label: "test"))
        var factory = NielsenTagFactory(seed: 5)
        let start = (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 3_600
        let records = (0..<30).map { index in
            var record = MeterRecord.delivery(factory.owner(secondsIntoDay: index * 10), context: TagContext(pts: Int64(index) * 900_000,
                                              origin: TagOrigin(source: "s"), programDateTime: nil), at: Date(timeIntervalSince1970: start + Double(index) * 10))
            (record.channel, record.meter) = ("a", "m")
            return CollectedRecord(record: record, json: String(decoding: record.jsonLine, as: UTF8.self))
        }
        _ = try await store.store(CollectedBatch(id: "m-1", meterVersion: "0.12.0", records: records, receivedAt: start, postedBy: "local"))
        await store.close()

        let config = folder.appendingPathComponent("lineup.yaml")
        try Data("defaults: {alert_after: 8, vod: true}\nchannels:\n  - {name: a, url: \"\(server.url("a"))\"}\n  - {name: b, url: \"\(server.url("b"))\"}\n".utf8).write(to: config)
        let (process, _, err) = try Command.launch(["serve", config.path, "--listen", "127.0.0.1:0", "--report-database", database,
                                                    "--report-time-zone", "UTC"])
        defer { if process.isRunning { process.terminate() }; process.waitUntilExit() }
        let api = try #require(ServeCommandTests.apiAddress(from: err).address)
        #expect(try await ServeCommandTests.request("GET", api + "/report?days=0").status == 400)

        try await offThePool {
            let browser = try HeadlessBrowser()
            defer { browser.close() }
            let session = try browser.open(api + "/")
            try browser.waitUntil("document.querySelectorAll('tr[data-channel] a.days').length === 2", session: session, timeout: 30)
            let href = try browser.evaluate("document.querySelector('tr[data-channel=\"a\"] a.days').href", session: session) as? String
            #expect(href == api + "/report?channel=a&days=7")
            // The link, followed: channel a's week, its tags an hour ago and the silence since.
            let report = try browser.open(try #require(href))
            try browser.waitUntil("document.querySelectorAll('section.channel-day').length > 0", session: report, timeout: 30)
            let heat = try browser.evaluate("[...document.querySelectorAll('table.heat tbody th')].map(th => th.textContent)", session: report) as? [String]
            #expect(heat == ["a"])
            let days = try browser.evaluate("document.querySelectorAll('section.channel-day').length", session: report) as? Int
            #expect(days == 7)
            let gaps = try browser.evaluate("[...document.querySelectorAll('table.gaps tbody tr')].length", session: report) as? Int ?? 0
            #expect(gaps >= 1, "the hour since its last tag is a gap")
            #expect(browser.log(session: report).errors.isEmpty)
        }
    }
}
