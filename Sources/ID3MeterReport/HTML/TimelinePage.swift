import Foundation
import ID3MeterCore

/// The HTML around a timeline page: one self-contained file (style, patterns and script inline,
/// nothing fetched but the live page's own data), readable without colour, at phone width and on paper.
package enum TimelinePage {
    /// The scan report: `data` (JSON) is drawn by the page's script.
    static func report(title: String, data: Data) -> String {
        document(title: title, start: """
            <script id="report-data" type="application/json">\(scriptSafe(data))</script>
            <script>ID3Meter.renderReport(JSON.parse(document.getElementById("report-data").textContent));</script>
            """)
    }

    /// `serve`'s live line-up: the page fetches `dataPath` (relative to itself) every `refresh` seconds.
    package static func live(dataPath: String, refresh: Int) -> String {
        document(title: "id3-meter serve: line-up", start: """
            <script>ID3Meter.startLive(\(javaScriptString(dataPath)), \(refresh * 1_000));</script>
            """)
    }

    private static func document(title: String, start: String) -> String {
        HTMLDocument.page(title: title, style: style, policy: "; script-src 'unsafe-inline'; connect-src 'self'; img-src data:", body: """
            <svg class="patterns" aria-hidden="true" width="0" height="0">
            <defs>
            <pattern id="hatch-short" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff1e5"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bc4c00" stroke-width="2"/></pattern>
            <pattern id="hatch-long" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#ddf4ff"/><path d="M0 0L6 6M6 0L0 6" stroke="#0550ae" stroke-width="1"/></pattern>
            <pattern id="dots-empty" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="#f6f8fa"/><circle cx="2.5" cy="2.5" r="1" fill="#57606a"/></pattern>
            </defs>
            </svg>
            <main id="page"></main>
            <noscript><p>This page draws its timelines with JavaScript; the same findings are in the report's text and JSON forms.</p></noscript>
            <script>\(TimelineScript.source)</script>
            \(start)
            """)
    }

    /// JSON inside `<script>`: no `<` at all, so no `</script>` or `<!--` can end or bend it.
    static func scriptSafe(_ json: Data) -> String {
        String(decoding: json, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    private static func javaScriptString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return scriptSafe(data)
    }

    private static let style = """
        :root { color-scheme: light; --valid: #1a7f37; --invalid: #cf222e; --placeholder: #9a6700; --ink: #1f2328; --rule: #d0d7de; }
        * { box-sizing: border-box; }
        body { margin: 0 auto; max-width: 1280px; padding: 1rem 1.25rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); }
        h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.1rem; margin: 1.75rem 0 .25rem; overflow-wrap: anywhere; }
        h4 { margin: .5rem 0 .25rem; font-size: .95rem; }
        .patterns { position: absolute; }
        .legend { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; list-style: none; padding: 0; margin: .5rem 0 1rem; font-size: .9rem; }
        .legend li { display: flex; align-items: center; gap: .3rem; } .legend svg { flex: none; }
        .table-wrap { overflow-x: auto; }
        table.summary, table.checks { border-collapse: collapse; width: 100%; font-size: .9rem; margin-bottom: 1rem; }
        table.checks tr.fail th, table.renditions tr.fail th, table.renditions tr.fail td:last-child { color: var(--invalid); font-weight: 600; }
        caption { text-align: left; font-weight: 600; padding: .25rem 0; }
        th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--rule); }
        tbody th { font-weight: normal; overflow-wrap: anywhere; max-width: 28rem; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .badge { display: inline-block; border: 1px solid currentColor; border-radius: 4px; padding: 0 .35em; margin: 0 .2em .15em 0; font-size: .85em; white-space: nowrap; }
        .badge.pass { color: var(--valid); } .badge.pass::before { content: "\\2713  "; }
        .badge.fail { color: var(--invalid); } .badge.fail::before { content: "\\2717  "; }
        .verdict.pass { color: var(--valid); } .verdict.fail { color: var(--invalid); font-weight: 600; }
        .note, .updated { color: #57606a; font-size: .85rem; margin: .25rem 0; }
        .problem { color: var(--invalid); font-size: .85rem; margin: .15rem 0; overflow-wrap: anywhere; }
        .timeline-box { width: 100%; min-height: 124px; }
        section.source { content-visibility: auto; contain-intrinsic-size: auto 260px; }
        svg.timeline { display: block; font-size: 11px; }
        svg.timeline [data-type] { cursor: pointer; } svg.timeline [data-type]:focus { outline: 2px solid #0969da; }
        .lane { stroke: var(--rule); } .lane-label { fill: #57606a; }
        .mark-v circle, rect.mark-v { fill: var(--valid); }
        .mark-p path, rect.mark-p { fill: var(--placeholder); }
        .mark-i path { fill: none; stroke: var(--invalid); stroke-width: 2.5; stroke-linecap: round; } rect.mark-i { fill: var(--invalid); }
        .span rect, rect.span { stroke-width: 1; }
        .span-short rect, rect.span-short { fill: url(#hatch-short); stroke: #bc4c00; }
        .span-long rect, rect.span-long { fill: url(#hatch-long); stroke: #0550ae; }
        .span-empty rect, rect.span-empty { fill: url(#dots-empty); stroke: #57606a; stroke-dasharray: 3 2; }
        .span-letter { font-size: 10px; font-weight: 700; fill: var(--ink); }
        .break line, line.break { stroke: var(--ink); stroke-width: 2; stroke-dasharray: 4 3; }
        .axis line { stroke: #57606a; } .axis text { fill: #57606a; }
        .detail dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: 0; font-size: .85rem; }
        .detail dt { color: #57606a; } .detail dd { margin: 0; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
        @media (max-width: 640px) { body { padding: .5rem; font-size: 14px; } th, td { padding: .25rem .3rem; } }
        @media print {
          body { max-width: none; padding: 0; font-size: 11px; }
          a { color: inherit; text-decoration: none; }
          section { break-inside: avoid; } .detail:empty, .updated { display: none; }
          .table-wrap { overflow: visible; }
        }
        """
}
