import ID3MeterCore

/// A channel's day written as `JSONEncoder` (sorted keys, slashes unescaped) encodes it, the
/// fields in key order: a fleet's month is 300,000 days, and the encoder's reflection and boxing
/// were a fifth of its report. `CoverageReport.json` writes its days so; CoverageHourTests holds
/// the bytes to the encoder's.
extension ChannelDay {
    func write(_ line: inout JSONLine) {
        line.add("channel", channel)
        line.add("credited_minutes", creditedMinutes)
        line.add("day", day)
        line.objects("failing_checks", failingChecks) { line, check in
            line.add("check", check.check)
            line.add("detail", check.detail)
            line.add("seconds", check.seconds)
        }
        line.objects("gaps", gaps) { line, gap in
            line.objects("causes", gap.causes) { line, cause in
                line.add("detail", cause.detail)
                line.add("kind", cause.kind.rawValue)
                line.add("meters", cause.meters)
            }
            line.add("from", gap.from)
            line.add("seconds", gap.seconds)
            line.add("start_unix", gap.start)
            line.add("to", gap.to)
        }
        line.object("info") { line in
            line.add("intervals_over_310s", info.intervalsOverLimit)
            line.add("longest_interval_seconds", info.longestIntervalSeconds)
            line.add("tags", info.tags)
        }
        line.objects("meters", meters) { line, part in
            line.add("creditable_tags", part.creditableTags)
            line.add("credited_minutes", part.creditedMinutes)
            line.add("meter", part.meter)
            line.add("sole_minutes", part.soleMinutes)
        }
        line.add("on_air_from", onAirFrom)
        line.add("on_air_minutes", onAirMinutes)
        line.add("on_air_to", onAirTo)
        line.objects("strip", strip) { line, run in
            line.add("minute", run.minute)
            line.add("minutes", run.minutes)
            line.add("state", run.state.rawValue)
        }
        line.object("tags") { line in
            line.add("creditable", tags.creditable)
            line.add("info", tags.info)
            line.add("invalid", tags.invalid)
            line.add("placeholder", tags.placeholder)
        }
    }
}
