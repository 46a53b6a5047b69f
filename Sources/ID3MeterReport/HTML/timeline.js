"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const KINDS = {
    v: { name: "valid", label: "valid tag", lane: 0 },
    p: { name: "placeholder", label: "placeholder PC CID", lane: 1 },
    i: { name: "invalid", label: "invalid tag", lane: 2 },
  };
  const SPANS = { short: "gap under 4 s", long: "gap over 12 s", empty: "segment without a tag" };
  const SPAN_LETTER = { short: "S", long: "L", empty: "\u2205" };
  const LEFT = 92, RIGHT = 14, TOP = 16, LANE = 22, STRIP = 12;
  const HEIGHT = TOP + 3 * LANE + STRIP + 30;

  function html(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) if (value != null) node.setAttribute(key, value);
    for (const child of children) if (child != null) node.append(child);
    return node;
  }
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) if (value != null) node.setAttribute(key, value);
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  function seconds(value) {
    if (value == null) return "\u2013";
    const sign = value < 0 ? "-" : "", abs = Math.abs(value);
    if (abs < 60) return sign + abs.toFixed(abs < 10 ? 3 : 1) + " s";
    const h = Math.floor(abs / 3600), m = Math.floor(abs % 3600 / 60), s = Math.floor(abs % 60);
    const two = n => String(n).padStart(2, "0");
    return sign + (h ? h + ":" + two(m) : m) + ":" + two(s);
  }
  function clock(start, t) {
    if (!start) return null;
    return new Date(Date.parse(start) + t * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }
  function ptsText(pts) { return pts == null ? "none" : pts + " (" + (pts / 90000).toFixed(3) + " s)"; }

  function shape(kind, x, y) {
    if (kind === "v") return svg("circle", { cx: x, cy: y, r: 4.5 });
    if (kind === "p") return svg("path", { d: `M${x} ${y - 6}L${x + 6} ${y}L${x} ${y + 6}L${x - 6} ${y}Z` });
    return svg("path", { d: `M${x - 4.5} ${y - 4.5}L${x + 4.5} ${y + 4.5}M${x - 4.5} ${y + 4.5}L${x + 4.5} ${y - 4.5}` });
  }
  const laneY = lane => TOP + LANE * lane + LANE / 2;

  function legend() {
    const items = [];
    for (const [kind, info] of Object.entries(KINDS)) {
      const mark = svg("svg", { width: 16, height: 16, "aria-hidden": "true", class: "mark mark-" + kind });
      mark.append(shape(kind, 8, 8));
      items.push(html("li", {}, mark, " " + info.label));
    }
    for (const [kind, label] of Object.entries(SPANS)) {
      const box = svg("svg", { width: 22, height: 16, "aria-hidden": "true" },
        svg("rect", { x: 1, y: 1, width: 20, height: 14, class: "span span-" + kind }),
        svg("text", { x: 11, y: 12, "text-anchor": "middle", class: "span-letter" }, SPAN_LETTER[kind]));
      items.push(html("li", {}, box, " " + label));
    }
    const cut = svg("svg", { width: 16, height: 16, "aria-hidden": "true" },
      svg("line", { x1: 8, x2: 8, y1: 0, y2: 16, class: "break" }));
    items.push(html("li", {}, cut, " PTS break (discontinuity or jump)"));
    return html("ul", { class: "legend", "aria-label": "Legend" }, ...items);
  }

  function tickStep(end, width) {
    const wanted = end / Math.max(2, (width - LEFT - RIGHT) / 110);
    const steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
    return steps.find(step => step >= wanted) || Math.ceil(wanted / 86400) * 86400;
  }

  function describeMark(tl, index) {
    const [t, kind, pts, detail] = tl.marks[index];
    const rows = [["Tag", KINDS[kind].label], ["PTS", ptsText(pts)], ["On the timeline", seconds(t)]];
    const when = detail && detail.program_date_time || clock(tl.start, t);
    if (when) rows.push(["Wall clock", when]);
    if (detail) {
      if (detail.segment) rows.push(["Segment", detail.segment]);
      rows.push(["PC CID", detail.pc_cid], ["FD CID", detail.fd_cid], ["Watermark data", detail.watermark],
        ["PC offset", detail.pc_offset], ["FD offset", detail.fd_offset], ["Breakout", detail.breakout]);
      rows.push(["Notes", detail.notes.length ? detail.notes.join("; ") : "none"]);
    } else {
      rows.push(["Payload", "not kept in this report (see the note above the timeline)"]);
    }
    return rows;
  }
  function describeBin(tl, index) {
    const [from, to, valid, invalid, placeholder, first, last] = tl.bins[index];
    const rows = [["Tags", String(valid + invalid + placeholder) + " drawn as one mark"],
      ["From", seconds(from) + (tl.start ? " (" + clock(tl.start, from) + ")" : "")],
      ["To", seconds(to) + (tl.start ? " (" + clock(tl.start, to) + ")" : "")],
      ["Valid", String(valid)], ["Placeholder PC CID", String(placeholder)], ["Invalid", String(invalid)],
      ["PTS", ptsText(first) + " to " + ptsText(last)]];
    return rows;
  }
  function describeSpan(tl, index) {
    const [from, to, length, kind, count, label] = tl.spans[index];
    const worst = kind === "short" ? "Shortest" : kind === "long" ? "Longest" : "Longest segment";
    const rows = [["Finding", count > 1 ? `${count} of them, back to back: ${SPANS[kind]}` : SPANS[kind]],
      [count > 1 ? worst : kind === "empty" ? "Duration" : "Gap", seconds(length)],
      ["From", seconds(from) + (tl.start ? " (" + clock(tl.start, from) + ")" : "")],
      ["To", seconds(to) + (tl.start ? " (" + clock(tl.start, to) + ")" : "")]];
    if (label) rows.push(["Segment", label]);
    return rows;
  }
  function describeBreak(tl, index) {
    const [t, detail, count] = tl.breaks[index];
    return [["PTS break", detail + (count > 1 ? " (and " + (count - 1) + " more here)" : "")],
      ["On the timeline", seconds(t)]];
  }
  const DESCRIBE = { mark: describeMark, bin: describeBin, span: describeSpan, break: describeBreak };

  function showDetail(panel, rows, title) {
    const list = html("dl");
    for (const [name, value] of rows) list.append(html("dt", {}, name), html("dd", {}, value == null ? "\u2013" : String(value)));
    panel.replaceChildren(html("h4", {}, title), list);
  }

  function drawTimeline(box, tl, panel, name) {
    const width = Math.max(320, Math.floor(box.clientWidth || 960));
    const end = tl.end > 0 ? tl.end : 1;
    const x = t => LEFT + (t / end) * (width - LEFT - RIGHT);
    const root = svg("svg", { class: "timeline", width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: "group",
      "aria-label": `Timeline of ${name}: ${tl.tags} Nielsen tags over ${seconds(tl.end)}` });
    for (const [kind, info] of Object.entries(KINDS)) {
      root.append(svg("text", { class: "lane-label", x: LEFT - 8, y: laneY(info.lane) + 4, "text-anchor": "end" }, info.name));
      root.append(svg("line", { class: "lane", x1: LEFT, x2: width - RIGHT, y1: laneY(info.lane), y2: laneY(info.lane) }));
    }
    const item = (type, index, node, label) => {
      node.setAttribute("data-type", type);
      node.setAttribute("data-index", index);
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "button");
      node.setAttribute("aria-label", label);
      node.append(svg("title", {}, label));
      return node;
    };
    // Gaps shade the lanes; a tagless segment is a strip below them.
    const spanOrder = tl.spans.map((span, index) => index).sort((a, b) => (tl.spans[a][3] === "empty") - (tl.spans[b][3] === "empty"));
    for (const index of spanOrder) {
      const [from, to, length, kind, count, label] = tl.spans[index];
      const left = x(from), span = Math.max(x(to) - left, 3), strip = kind === "empty";
      const top = strip ? TOP + 3 * LANE + 2 : TOP, tall = strip ? STRIP - 2 : 3 * LANE;
      const group = svg("g", { class: "span span-" + kind, "data-kind": kind, "data-from": from, "data-to": to, "data-seconds": length, "data-count": count },
        svg("rect", { x: left, y: top, width: span, height: tall }),
        svg("text", { class: "span-letter", x: left + span / 2, y: strip ? top + 10 : TOP - 4, "text-anchor": "middle" }, SPAN_LETTER[kind]));
      root.append(item("span", index, group, `${SPANS[kind]}${count > 1 ? " \u00d7" + count : ""}: ${seconds(length)} at ${seconds(from)}${label ? " (" + label + ")" : ""}`));
    }
    tl.breaks.forEach(([t, detail, count], index) => {
      const group = svg("g", { class: "break", "data-t": t, "data-count": count },
        svg("line", { x1: x(t), x2: x(t), y1: TOP - 6, y2: TOP + 3 * LANE + 4 }));
      root.append(item("break", index, group, `PTS break at ${seconds(t)}: ${detail}`));
    });
    tl.marks.forEach(([t, kind, pts], index) => {
      const group = svg("g", { class: "mark mark-" + kind, "data-kind": KINDS[kind].name, "data-t": t, "data-pts": pts }, shape(kind, x(t), laneY(KINDS[kind].lane)));
      root.append(item("mark", index, group, `${KINDS[kind].label} at ${seconds(t)}, PTS ${ptsText(pts)}`));
    });
    const most = tl.bins.reduce((max, bin) => Math.max(max, bin[2], bin[3], bin[4]), 1);
    tl.bins.forEach(([from, to, valid, invalid, placeholder], index) => {
      const group = svg("g", { class: "bin", "data-from": from, "data-to": to, "data-count": valid + invalid + placeholder });
      for (const [kind, count] of [["v", valid], ["p", placeholder], ["i", invalid]]) {
        if (!count) continue;
        const tall = 4 + (LANE - 6) * Math.sqrt(count / most);
        group.append(svg("rect", { class: "mark-" + kind, x: x(from), width: Math.max(x(to) - x(from), 1.5), y: laneY(KINDS[kind].lane) - tall / 2, height: tall }));
      }
      root.append(item("bin", index, group, `${valid + invalid + placeholder} tags from ${seconds(from)} to ${seconds(to)}: ${valid} valid, ${placeholder} placeholder, ${invalid} invalid`));
    });
    const axis = svg("g", { class: "axis" });
    const base = TOP + 3 * LANE + STRIP + 4;
    axis.append(svg("line", { x1: LEFT, x2: width - RIGHT, y1: base, y2: base }));
    const step = tickStep(end, width);
    for (let t = 0; t <= end + 1e-9; t += step) {
      const label = tl.start ? clock(tl.start, t).slice(11, 19) : step < 1 ? t.toFixed(1) + " s" : t < 60 ? Math.round(t) + " s" : seconds(t);
      axis.append(svg("line", { x1: x(t), x2: x(t), y1: base, y2: base + 4 }),
        svg("text", { x: x(t), y: base + 16, "text-anchor": t === 0 ? "start" : "middle" }, label));
    }
    root.append(axis);
    const open = event => {
      const target = event.target.closest("[data-type]");
      if (!target) return;
      if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      const type = target.getAttribute("data-type"), index = Number(target.getAttribute("data-index"));
      showDetail(panel, DESCRIBE[type](tl, index), target.getAttribute("aria-label"));
    };
    root.addEventListener("click", open);
    root.addEventListener("keydown", open);
    box.replaceChildren(root);
  }

  function axisNote(tl, live) {
    const notes = [];
    if (tl.start) notes.push(live ? "Times in UTC: EXT-X-PROGRAM-DATE-TIME, or when this meter read the tag where the stream has none." : "Times in UTC, from EXT-X-PROGRAM-DATE-TIME.");
    else notes.push("Times are seconds from the first tag, by PTS.");
    if (tl.bins.length) notes.push(`${tl.tags} tags are drawn as ${tl.bins.length} marks: tags closer than ${seconds(tl.bin_seconds)} are aggregated into one mark, and gaps and segments that close together merged.`);
    if (tl.without_details && !tl.bins.length) notes.push(`${tl.without_details} of the ${tl.tags} tags are drawn without their payload fields: the report keeps those of a bounded number of tags.`);
    return html("p", { class: "note" }, notes.join(" "));
  }

  // Draws timelines as they come into view when there are many; all of them before printing.
  function Drawer(eager) {
    const pending = new Map(), drawn = new Map();
    const draw = box => { const args = pending.get(box); pending.delete(box); drawn.set(box, args); drawTimeline(box, ...args); };
    const observer = !eager && "IntersectionObserver" in window ? new IntersectionObserver(entries => {
      for (const entry of entries) if (entry.isIntersecting && pending.has(entry.target)) { observer.unobserve(entry.target); draw(entry.target); }
    }, { rootMargin: "400px" }) : null;
    window.addEventListener("beforeprint", () => { for (const box of [...pending.keys()]) draw(box); });
    let resizing = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizing);
      resizing = setTimeout(() => { for (const [box, args] of drawn) drawTimeline(box, ...args); }, 150);
    });
    return {
      add(box, tl, panel, name) {
        drawn.delete(box);
        pending.set(box, [tl, panel, name]);
        if (observer) observer.observe(box); else draw(box);
      },
      forget(box) { pending.delete(box); drawn.delete(box); if (observer) observer.unobserve(box); },
    };
  }
  const marksOf = tl => tl ? tl.marks.length + tl.bins.length : 0;

  function checks(list) {
    if (!list.length) return html("span", { class: "badge pass" }, "all passed");
    const cell = html("span");
    for (const name of list) cell.append(html("span", { class: "badge fail" }, name.replace(/_/g, " ")), " ");
    return cell;
  }
  function reasons(byReason) {
    const entries = Object.entries(byReason || {});
    return entries.length ? entries.map(([code, count]) => `${code}: ${count}`).join(", ") : "\u2013";
  }

  function renderReport(report) {
    const root = document.getElementById("page");
    const total = report.total;
    const failed = Object.keys(report.failed_checks);
    root.append(html("header", {},
      html("h1", {}, "Nielsen tag QA report"),
      html("p", {}, `${total.sources} source${total.sources === 1 ? "" : "s"}, ${total.nielsen_tags} Nielsen tags (${total.valid_tags} valid), written by id3-meter ${report.version} on ${report.generated}.`),
      ...(report.incomplete ? [html("p", { class: "verdict fail" }, `Incomplete: ${report.incomplete}.`)] : []),
      html("p", { class: failed.length ? "verdict fail" : "verdict pass" }, failed.length ? `Checks failed: ${failed.map(name => name.replace(/_/g, " ")).join(", ")}.` : "Every check passed."),
      legend()));
    // The checks in the Validator's terms: what each judges, and how the sources fared.
    const checkTable = html("table", { class: "checks" },
      html("caption", {}, "Checks, in the terms of Nielsen's ID3 Tag Validator (user guide 1.8F); results read errors / minimum / maximum tolerated"),
      html("thead", {}, html("tr", {}, ...["Test", "Check", "Passed", "Failed", "No status", "What it judges"].map(name => html("th", { scope: "col" }, name)))),
      html("tbody", {}, ...(report.checks || []).map(check => html("tr", { class: check.fail ? "fail" : "" },
        html("td", { class: "number" }, check.test == null ? "\u2013" : String(check.test)), html("th", { scope: "row" }, check.name.replace(/_/g, " ")),
        html("td", { class: "number" }, String(check.pass)), html("td", { class: "number" }, String(check.fail)),
        html("td", { class: "number" }, String(check.no_status)), html("td", {}, check.basis)))));
    root.append(html("div", { class: "table-wrap" }, checkTable));
    // Each presentation's renditions, compared: a row each, linked to its own timeline below.
    for (const ladder of report.renditions || []) {
      const place = new Map(report.sources.map((source, index) => [source.source, index]));
      root.append(html("div", { class: "table-wrap" }, html("table", { class: "renditions" },
        html("caption", {}, `Renditions of ${ladder.source}: ${ladder.passed ? "the same tags" : "they differ"}`),
        html("thead", {}, html("tr", {}, ...["Rendition", "Group", "Bandwidth", "Tags", "Offset", "Verdict"].map(name => html("th", { scope: "col" }, name)))),
        html("tbody", {}, ...ladder.rows.map(row => html("tr", { class: row.passed ? "" : "fail" },
          html("th", { scope: "row" }, place.has(row.source) ? html("a", { href: "#source-" + place.get(row.source) }, row.name) : row.name),
          html("td", {}, row.group), html("td", { class: "number" }, row.bandwidth == null ? "\u2013" : String(row.bandwidth)),
          html("td", { class: "number" }, String(row.tags)), html("td", { class: "number" }, seconds(row.offset_seconds)),
          html("td", {}, row.verdict)))))));
    }
    const table = html("table", { class: "summary" },
      html("caption", {}, "Sources (each links to its timeline)"),
      html("thead", {}, html("tr", {}, ...["Source", "Tags", "Valid", "Invalid by reason", "Placeholder", "Longest gap", "Checks"].map(name => html("th", { scope: "col" }, name)))));
    const body = html("tbody");
    const row = index => {
      const source = report.sources[index];
      return html("tr", {},
        html("th", { scope: "row" }, html("a", { href: "#source-" + index }, source.source)),
        html("td", { class: "number" }, String(source.nielsen_tags)), html("td", { class: "number" }, String(source.valid_tags)),
        html("td", {}, reasons(source.invalid_by_reason)), html("td", { class: "number" }, String(source.placeholder_tags)),
        html("td", { class: "number" }, seconds(source.longest_gap_seconds)), html("td", {}, checks(source.failed_checks)));
    };
    // A long table is laid out in chunks after the first screen: 10,000 rows at once hold the page for seconds.
    let rows = 0;
    const fill = count => {
      const chunk = document.createDocumentFragment();
      for (const end = Math.min(rows + count, report.sources.length); rows < end; rows++) chunk.append(row(rows));
      body.append(chunk);
    };
    fill(200);
    const more = () => { if (rows < report.sources.length) { fill(1000); setTimeout(more, 0); } };
    setTimeout(more, 0);
    window.addEventListener("beforeprint", () => fill(report.sources.length));
    table.append(body);
    root.append(html("div", { class: "table-wrap" }, table));
    const eager = report.sources.reduce((sum, source) => sum + marksOf(source.timeline), 0) <= 20000 && report.sources.length <= 200;
    const drawer = Drawer(eager);
    report.sources.forEach((source, index) => {
      const section = html("section", { id: "source-" + index, class: "source", "data-source": source.source },
        html("h2", {}, source.source),
        html("p", {}, `${source.nielsen_tags} Nielsen tags, ${source.valid_tags} valid; longest gap ${seconds(source.longest_gap_seconds)}. Checks: `, checks(source.failed_checks)));
      if ((source.check_results || []).length) section.append(html("p", { class: "checks" }, "Results: " + source.check_results.join("; ")));
      for (const line of source.failures.concat(source.warnings)) section.append(html("p", { class: "problem" }, line));
      if (source.timeline && source.timeline.tags + source.timeline.spans.length > 0) {
        const box = html("div", { class: "timeline-box" }), panel = html("div", { class: "detail", "aria-live": "polite" });
        section.append(axisNote(source.timeline, false), box, panel);
        root.append(section);
        drawer.add(box, source.timeline, panel, source.source);
      } else {
        section.append(html("p", { class: "note" }, "No Nielsen tag to draw."));
        root.append(section);
      }
    });
  }

  function startLive(url, interval) {
    const root = document.getElementById("page");
    const status = html("p", { class: "updated", "aria-live": "polite" }, "Loading\u2026");
    const table = html("table", { class: "summary" },
      html("caption", {}, "Channels (each links to its last hour of tags)"),
      html("thead", {}, html("tr", {}, ...["Channel", "State", "Last tag", "Delivered", "Invalid", "Alerts"].map(name => html("th", { scope: "col" }, name)))));
    const body = html("tbody");
    table.append(body);
    const sections = html("div");
    root.append(html("header", {}, html("h1", {}, "id3-meter serve: the line-up"), status, legend()), html("div", { class: "table-wrap" }, table), sections);
    // Every refresh draws again only the channels near the screen: a line-up may be a thousand.
    const drawer = Drawer(false);
    const shown = new Map();
    let updates = 0;
    const render = lineup => {
      body.replaceChildren(...lineup.channels.map((channel, index) => html("tr", { "data-channel": channel.name },
        html("th", { scope: "row" }, html("a", { href: "#channel-" + index }, channel.name),
          ...(lineup.reports ? [" ", html("a", { class: "days", href: "report?channel=" + encodeURIComponent(channel.name) + "&days=" + lineup.reports }, "last " + lineup.reports + " days")] : [])),
        html("td", {}, channel.state),
        html("td", { class: "number" }, channel.last_tag_age_seconds == null ? "none yet" : channel.last_tag_age_seconds < 60 ? Math.round(channel.last_tag_age_seconds) + " s ago" : seconds(channel.last_tag_age_seconds) + " ago"),
        html("td", { class: "number" }, String(channel.delivered)), html("td", { class: "number" }, String(channel.invalid)),
        html("td", {}, channel.alerts.length ? html("span", {}, ...channel.alerts.map(alert => html("span", { class: "badge fail" }, alert.replace(/_/g, " ")))) : html("span", { class: "badge pass" }, "none")))));
      const names = new Set(lineup.channels.map(channel => channel.name));
      for (const [name, parts] of shown) if (!names.has(name)) { drawer.forget(parts.box); parts.section.remove(); shown.delete(name); }
      lineup.channels.forEach((channel, index) => {
        let parts = shown.get(channel.name);
        if (!parts) {
          parts = { heading: html("h2"), note: html("p"), box: html("div", { class: "timeline-box" }), panel: html("div", { class: "detail", "aria-live": "polite" }) };
          parts.section = html("section", { class: "source", "data-source": channel.name }, parts.heading, parts.note, parts.box, parts.panel);
          shown.set(channel.name, parts);
        }
        parts.section.id = "channel-" + index;
        parts.heading.textContent = `${channel.name} (${channel.state})`;
        sections.append(parts.section);
        parts.note.replaceWith(parts.note = axisNote(channel.timeline, true));
        drawer.add(parts.box, channel.timeline, parts.panel, channel.name);
      });
      updates += 1;
      document.body.setAttribute("data-updates", String(updates));
      status.textContent = `Updated ${lineup.generated}; ${lineup.channels.length} channel${lineup.channels.length === 1 ? "" : "s"}${lineup.shard ? ", shard " + lineup.shard : ""}${lineup.copies > 1 ? (lineup.copy != null ? `, copy ${lineup.copy + 1} of ${lineup.copies}` : `, one of ${lineup.copies} copies`) : ""}${lineup.meter ? " (" + lineup.meter + ")" : ""}. Refreshes every ${interval / 1000} s.`;
    };
    const poll = () => fetch(url, { cache: "no-store" })
      .then(response => { if (!response.ok) throw new Error("HTTP " + response.status); return response.json(); })
      .then(render)
      .catch(error => { status.textContent = `Could not update (${error.message}); trying again in ${interval / 1000} s.`; })
      .finally(() => setTimeout(poll, interval));
    poll();
  }

  window.ID3Meter = { renderReport, startLive };
})();
