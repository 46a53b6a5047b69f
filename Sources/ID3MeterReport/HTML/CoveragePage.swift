import ID3MeterCore

extension CoverageReport {
    /// The report as one self-contained HTML page a person reads in a minute: a heat map of
    /// channels by day (the worst channels first), the longest gaps with their causes, then each
    /// channel's day as a strip of its minutes. No script: the page is the same printed.
    package func html() -> String {
        // Channels by their stored bytes, not by String equality (canonical equivalence): two names
        // a database keeps apart are two rows here, as in the json and csv forms.
        let order = Dictionary(grouping: channels.indices, by: { Array(channels[$0].channel.utf8) })
        let names = order.keys.sorted { lhs, rhs in
            let (left, right) = (order[lhs]!.reduce(0) { $0 + channels[$1].gapSeconds }, order[rhs]!.reduce(0) { $0 + channels[$1].gapSeconds })
            return left != right ? left > right : lhs.lexicographicallyPrecedes(rhs)
        }
        var body = """
            <h1>Crediting by channel and day</h1>
            <p class="note">\(h(days.first ?? ""))\(days.count > 1 ? " to " + h(days.last ?? "") : "") · time zone \(h(timeZone)) · \
            \(names.count) channel\(names.count == 1 ? "" : "s") · from \(h(source)) · made \(h(generated))</p>
            <p class="note">A minute is credited when some meter delivered a creditable tag in it (valid, DATA, PC CID known). \
            A gap is 30 s or more on air without one.</p>
            """
        if channels.isEmpty, notBegun.count < days.count {
            body += "<p class=\"problem\">No channel was on air on these days: "
                + (holds.map { "the records are of \(h($0.first)) to \(h($0.last))." } ?? "the source holds no records.") + "</p>"
        }
        if !notBegun.isEmpty {
            body += """
                <p class="problem">\(h(notBegun.joined(separator: ", "))) had not begun when the report was made: \
                nothing of \(notBegun.count == 1 ? "it" : "them") is reported.</p>
                """
        }
        body += heatMap(names: names, order: order)
        body += gapTable()
        for name in names {
            for index in order[name]! { body += section(channels[index], id: index) }
        }
        return HTMLDocument.page(title: "id3-meter report: \(days.first ?? "")", style: Self.style, body: "<main>\n\(body)\n</main>")
    }

    private func heatMap(names: [[UInt8]], order: [[UInt8]: [Int]]) -> String {
        var rows = ""
        for name in names {
            let byDay = Dictionary(order[name]!.map { (channels[$0].day, $0) }, uniquingKeysWith: { first, _ in first })
            var cells = ""
            for day in days {
                guard let index = byDay[day], channels[index].onAirMinutes > 0 else {
                    cells += #"<td class="cell off">off air</td>"#
                    continue
                }
                let channelDay = channels[index]
                let percent = channelDay.creditedPercent
                let tone = percent >= 100 ? "full" : percent >= 99 ? "high" : percent >= 95 ? "mid" : percent >= 80 ? "low" : "bad"
                let gaps = channelDay.gaps.isEmpty ? "" : " · \(channelDay.gaps.count) gap\(channelDay.gaps.count == 1 ? "" : "s")"
                cells += ##"<td class="cell \##(tone)"><a href="#d-\##(index)">\##(Self.percent(percent))\##(gaps)</a></td>"##
            }
            rows += "<tr><th scope=\"row\">\(h(String(decoding: name, as: UTF8.self)))</th>\(cells)</tr>\n"
        }
        return """
            <h2>Credited minutes, by channel and day</h2>
            <div class="table-wrap"><table class="heat">
            <thead><tr><th scope="col">Channel</th>\(days.map { "<th scope=\"col\">\(h($0))</th>" }.joined())</tr></thead>
            <tbody>
            \(rows)</tbody></table></div>
            """
    }

    private func gapTable() -> String {
        let worst = worstGaps
        guard !worst.isEmpty else { return "<h2>Gaps</h2><p class=\"verdict pass\">No gap: every minute on air was credited.</p>" }
        let shown = worst.prefix(100)
        let rows = shown.map { channel, day, gap in
            """
            <tr><th scope="row">\(h(channel))</th><td>\(h(day))</td><td>\(h(Self.clock(gap.from)))</td>\
            <td class="number">\(Self.length(gap.seconds))</td><td>\(causeList(gap.causes))</td></tr>
            """
        }.joined(separator: "\n")
        return """
            <h2>The longest gaps</h2>
            <p class="note">\(worst.count) gap\(worst.count == 1 ? "" : "s")\(worst.count > shown.count ? ", the \(shown.count) longest shown" : ""); \
            causes are what the meters recorded, the likeliest first.</p>
            <div class="table-wrap"><table class="gaps">
            <thead><tr><th scope="col">Channel</th><th scope="col">Day</th><th scope="col">From</th><th scope="col">Length</th><th scope="col">What the records say</th></tr></thead>
            <tbody>
            \(rows)
            </tbody></table></div>
            """
    }

    private func causeList(_ causes: [ChannelDay.Cause]) -> String {
        causes.map { cause in
            let meters = cause.meters.isEmpty ? "" : " <span class=\"meters\">(\(h(cause.meters.joined(separator: ", "))))</span>"
            return "<span class=\"badge cause-\(cause.kind.rawValue)\">\(h(cause.kind.rawValue))</span> \(h(cause.detail))\(meters)"
        }.joined(separator: "<br>")
    }

    private func section(_ day: ChannelDay, id: Int) -> String {
        let total = max(day.strip.reduce(0) { $0 + $1.minutes }, 1)
        let rects = day.strip.map { run in
            #"<rect class="\#(run.state.rawValue)" x="\#(run.minute)" y="0" width="\#(run.minutes)" height="24"><title>\#(run.state.rawValue.replacingOccurrences(of: "_", with: " ")): \#(Self.length(run.minutes * 60)) from minute \#(run.minute)</title></rect>"#
        }.joined()
        let ticks = stride(from: 0, through: total, by: 180).map {
            #"<line x1="\#($0)" x2="\#($0)" y1="24" y2="30"/><text x="\#($0)" y="42">\#(String(format: "%02d:00", $0 / 60))</text>"#
        }.joined()
        let gaps = day.gaps.isEmpty ? "<p class=\"verdict pass\">No gap.</p>" : """
            <table class="gaps"><thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Length</th><th scope="col">What the records say</th></tr></thead><tbody>
            \(day.gaps.map { "<tr><td>\(h(Self.clock($0.from)))</td><td>\(h(Self.clock($0.to)))</td><td class=\"number\">\(Self.length($0.seconds))</td><td>\(causeList($0.causes))</td></tr>" }.joined(separator: "\n"))
            </tbody></table>
            """
        let meters = day.meters.count < 2 ? "" : "<p class=\"note\">Meters: " + day.meters.map {
            "\(h($0.meter)) credited \($0.creditedMinutes) min (\($0.soleMinutes) alone)"
        }.joined(separator: "; ") + "</p>"
        let checks = day.failingChecks.isEmpty ? "" : "<p class=\"problem\">QA checks failing: " + day.failingChecks.map {
            "\(h($0.check)) for \(Self.length($0.seconds))" + ($0.detail.map { " (\(h($0)))" } ?? "")
        }.joined(separator: ", ") + "</p>"
        let info = day.info.intervalsOverLimit > 0
            ? "<p class=\"problem\">INFO tags: \(day.info.tags); \(day.info.intervalsOverLimit) interval\(day.info.intervalsOverLimit == 1 ? "" : "s") over 310 s (longest \(Self.length(day.info.longestIntervalSeconds ?? 0))).</p>"
            : "<p class=\"note\">INFO tags: \(day.info.tags), none more than 310 s apart.</p>"
        return """
            <section class="channel-day" id="d-\(id)">
            <h3>\(h(day.channel)) · \(h(day.day)) · \(Self.percent(day.creditedPercent)) credited</h3>
            <p class="note">\(day.creditedMinutes) of \(day.onAirMinutes) minutes on air credited; \(day.tags.creditable) creditable, \
            \(day.tags.placeholder) placeholder-CID and \(day.tags.invalid) invalid tags.</p>
            <svg class="strip" viewBox="0 0 \(total) 44" preserveAspectRatio="none" role="img" aria-label="\(h(day.channel)) on \(h(day.day)), minute by minute">\(rects)<g class="ticks">\(ticks)</g></svg>
            \(gaps)\(meters)\(checks)\(info)
            </section>
            """
    }

    private func h(_ text: String) -> String { HTMLDocument.escaped(text) }

    static func percent(_ value: Double) -> String { value == value.rounded() ? "\(Int(value)) %" : "\(value) %" }

    /// `2026-11-20T14:03:07+01:00` as `14:03:07`.
    static func clock(_ time: String) -> String {
        guard let t = time.firstIndex(of: "T") else { return time }
        return String(time[time.index(after: t)...].prefix(8))
    }

    /// `3725` as `1 h 2 min 5 s`.
    static func length(_ seconds: Int) -> String {
        let (hours, minutes, rest) = (seconds / 3_600, seconds % 3_600 / 60, seconds % 60)
        return [hours > 0 ? "\(hours) h" : nil, minutes > 0 ? "\(minutes) min" : nil, rest > 0 || seconds == 0 ? "\(rest) s" : nil]
            .compactMap { $0 }.joined(separator: " ")
    }

    private static let style = """
        :root { color-scheme: light; --ink: #1f2328; --rule: #d0d7de; --credited: #1a7f37; --uncredited: #cf222e; --off: #eaeef2; }
        * { box-sizing: border-box; }
        body { margin: 0 auto; max-width: 1280px; padding: 1rem 1.25rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); }
        h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 1.5rem 0 .25rem; } h3 { font-size: 1rem; margin: 1.25rem 0 .2rem; overflow-wrap: anywhere; }
        .note { color: #57606a; font-size: .85rem; margin: .25rem 0; } .problem { color: var(--uncredited); font-size: .85rem; margin: .2rem 0; }
        .verdict.pass { color: var(--credited); }
        .table-wrap { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: .88rem; margin-bottom: .75rem; }
        th, td { text-align: left; vertical-align: top; padding: .25rem .45rem; border-bottom: 1px solid var(--rule); }
        tbody th { font-weight: normal; overflow-wrap: anywhere; max-width: 20rem; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        td.cell { text-align: center; white-space: nowrap; font-variant-numeric: tabular-nums; }
        td.cell a { color: inherit; text-decoration: none; display: block; }
        td.full { background: #dafbe1; } td.high { background: #fff8c5; } td.mid { background: #ffdfb6; }
        td.low { background: #ffc1ba; } td.bad { background: #cf222e; color: #fff; font-weight: 600; } td.off { background: var(--off); color: #57606a; }
        .badge { display: inline-block; border: 1px solid currentColor; border-radius: 4px; padding: 0 .35em; font-size: .8em; white-space: nowrap; }
        .meters { color: #57606a; }
        svg.strip { display: block; width: 100%; height: 44px; }
        svg.strip rect.credited { fill: var(--credited); } svg.strip rect.uncredited { fill: var(--uncredited); } svg.strip rect.off_air { fill: var(--off); }
        svg.strip .ticks line { stroke: #57606a; vector-effect: non-scaling-stroke; } svg.strip .ticks text { fill: #57606a; font-size: 11px; }
        section.channel-day { content-visibility: auto; contain-intrinsic-size: auto 180px; }
        @media print { body { max-width: none; padding: 0; font-size: 11px; } a { color: inherit; } section { break-inside: avoid; } }
        """
}
