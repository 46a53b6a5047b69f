import Testing
import ID3Meter
import ID3MeterServe

/// The line-up config: values as written, and each mistake named by file, line and field.
@Suite("Line-up config")
struct LineupConfigTests {
    static let config = """
        defaults:
          alert_after: 20
          headers:
            X-Token: t0k3n
          ad_model: "2"
        channels:
          - name: news
            url: https://cdn.example/news/master.m3u8
            fps: 25
          - name: sport
            url: http://127.0.0.1:8080/sport/index.m3u8
            headers: ["Cookie: a=1", "X-Token: other"]
            alert_after: 45
            variant: highest
            live_start: 2
        """

    @Test func valuesAreReadWithTheDefaultsUnderThem() throws {
        let lineup = try LineupConfig.parse(Self.config, file: "lineup.yaml")
        #expect(lineup.channels.map(\.name) == ["news", "sport"])
        let news = lineup.channels[0], sport = lineup.channels[1]
        #expect(news.url == "https://cdn.example/news/master.m3u8")
        #expect(news.fps == 25 && news.alertAfter == 20 && news.adModel == "2" && news.liveStart == 3)
        #expect(news.headers == [Fetcher.Header(name: "X-Token", value: "t0k3n")])
        #expect(news.variant == .lowestBandwidth)
        #expect(sport.headers == [Fetcher.Header(name: "Cookie", value: "a=1"), Fetcher.Header(name: "X-Token", value: "other")])
        #expect(sport.alertAfter == 45 && sport.variant == .highestBandwidth && sport.liveStart == 2 && sport.fps == nil)
        #expect(sport.adModel == "2")
    }

    @Test(arguments: [
        // (text after the first channel, line, field, the reason; a refusal's words come from the rule that refused)
        ("    alert_afer: 10\n", 10, "channels[0].alert_afer", .notAField(allowed: ["ad_model", "alert_after", "app_id", "app_name", "app_version", "audit_renditions", "ca_file", "client_cert", "client_key", "fps", "headers", "live_start", "name", "program", "url", "variant", "vod"])),
        ("  - name: radio\n    url: http://x/y.m3u8\n    fps: 500\n", 12, "channels[1].fps", .mustBe("a number from 1 to 300")),
        ("    alert_after: -1\n", 10, "channels[0].alert_after", .mustBe("a number from 1 to 86400")),
        ("    ad_model: 3\n", 10, "channels[0].ad_model", .mustBe("1 (linear) or 2 (dynamic)")),
        ("    headers: [\"no colon\"]\n", 10, "channels[0].headers", .refused("'no colon' is not a header (Name: value)")),
        ("  - name: news\n    url: http://other/x.m3u8\n", 10, "channels[1].name", .nameTaken("news", line: 7)),
        ("  - name: radio\n", 10, "channels[1].url", .missing),
        ("  - name: radio\n    url: /var/local/file.m3u8\n", 11, "channels[1].url",
         .refused("'/var/local/file.m3u8' must be a URL (http, https, udp, srt, rtp or tcp)")),
        ("  - name: radio\n    url: gopher://x/y.m3u8\n", 11, "channels[1].url", .refused("not a protocol")),
        ("    vod: sometimes\n", 10, "channels[0].vod", .mustBe("true or false")),
        ("api_hosts: [cdn.example, \"10.0.0.0/33\"]\n", 10, "api_hosts[1]", .refused("is not an IPv4 network")),
        ("api_hosts: [\"http://cdn.example/\"]\n", 10, "api_hosts[0]", .refused("is not a host name, .suffix, address or network")),
        ("api_hosts: [[a]]\n", 10, "api_hosts[0]", .mustBe("a host or a network")),
    ] as [(String, Int, String, ConfigError.Reason)])
    func aMistakeIsNamedByLineAndField(extra: String, line: Int, field: String, reason: ConfigError.Reason) throws {
        let text = """
            defaults:
              alert_after: 20
            # comment
            channels:

              # the first channel
              - name: news
                url: https://cdn.example/news/master.m3u8
                fps: 25

            """ + extra
        let error = #expect(throws: ConfigError.self) { try LineupConfig.parse(text, file: "lineup.yaml") }
        #expect(error?.file == "lineup.yaml")
        #expect(error?.line == line, "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.field == field)
        switch (error?.reason, reason) {
        case (.refused(let said)?, .refused(let words)):
            #expect(said.contains(words), "\(said)")
        default:
            #expect(error?.reason == reason, "\(error.map(String.init(describing:)) ?? "")")
        }
    }

    @Test func brokenYAMLAndMissingPartsAreReportedToo() {
        let broken = #expect(throws: ConfigError.self) { try LineupConfig.parse("channels:\n  - name: [a\n", file: "x.yaml") }
        guard case .notYAML? = broken?.reason else { Issue.record("\(String(describing: broken))"); return }
        #expect(broken?.line != nil)
        let twice = #expect(throws: ConfigError.self) { try LineupConfig.parse("channels:\n  - name: a\n    name: b\n", file: "x.yaml") }
        #expect(twice?.reason == .notYAML("name given twice in one mapping"), "\(twice.map(String.init(describing:)) ?? "")")
        #expect(twice?.line != nil)
        let missing = #expect(throws: ConfigError.self) { try LineupConfig.parse("defaults: {}\n", file: "x.yaml") }
        #expect(missing?.field == "channels" && missing?.reason == .missing)
        let unreadable = #expect(throws: ConfigError.self) { try LineupConfig.load("/nonexistent/lineup.yaml") }
        guard case .unreadable? = unreadable?.reason else { Issue.record("\(String(describing: unreadable))"); return }
        #expect(unreadable?.line == nil)
    }

    /// `PUT /channels/{name}` takes one channel as JSON, over the config's defaults.
    /// `vod` marks a stream meant to end; channels are live (opened again after an ENDLIST) by default.
    @Test func vodIsReadAndLiveIsTheDefault() throws {
        let config = try LineupConfig.parse("""
            channels:
              - {name: film, url: "https://cdn.example/film.m3u8", vod: true}
              - {name: news, url: "https://cdn.example/news.m3u8"}
              - {name: sport, url: "https://cdn.example/sport.m3u8", vod: no}
            """, file: "lineup.yaml")
        #expect(config.channels.map(\.isVOD) == [true, false, false])
    }

    @Test func aChannelAsJSONTakesTheDefaults() throws {
        let lineup = try LineupConfig.parse(Self.config, file: "lineup.yaml")
        let added = try lineup.channel(from: #"{"name": "music", "url": "http://127.0.0.1:9/m.m3u8", "fps": 50}"#, source: "PUT /channels/music")
        #expect(added.name == "music" && added.fps == 50 && added.alertAfter == 20 && added.adModel == "2")
        #expect(added.headers == [Fetcher.Header(name: "X-Token", value: "t0k3n")])
        let bad = #expect(throws: ConfigError.self) {
            try lineup.channel(from: #"{"name": "music", "url": "http://127.0.0.1:9/m.m3u8", "fps": "fast"}"#, source: "PUT /channels/music")
        }
        #expect(bad?.description.hasPrefix("PUT /channels/music:1:fps:") == true, "\(bad.map(String.init(describing:)) ?? "")")
    }
}
