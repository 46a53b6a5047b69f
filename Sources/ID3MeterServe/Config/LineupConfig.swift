import Foundation
import ID3Meter
import Yams

/// The channels `serve` meters, from a YAML file:
///
/// ```yaml
/// defaults:            # optional; any channel field but name and url
///   alert_after: 30
///   headers: {X-Token: abc}
/// channels:
///   - name: news
///     url: https://cdn.example/news/master.m3u8
///     fps: 25
/// ```
///
/// Every field is checked before anything starts; the first problem is reported with its file,
/// line and field. Unknown fields are errors too: a misspelt `alert_afer` must not pass silently.
public struct LineupConfig: Sendable, Equatable {
    public var channels: [ChannelConfig]
    /// What a channel added over the API starts from.
    public var defaults: ChannelConfig
    /// Hosts (`cdn.example.com`, `.example.com`) and IPv4 networks (`10.1.0.0/16`) a channel added
    /// over the API may reach though they are loopback or private (`api_hosts`).
    public var apiHosts: [String] = []

    /// A config is an operator's file, but it is still read with bounds.
    static let maximumBytes = 16 << 20
    static let maximumChannels = 100_000

    public static func load(_ path: String) throws(ConfigError) -> LineupConfig {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigError(file: path, reason: .unreadable(error.localizedDescription))
        }
        guard data.count <= maximumBytes else {
            throw ConfigError(file: path, reason: .tooLarge(bytes: data.count, maximum: maximumBytes))
        }
        guard let text = String(data: data, encoding: .utf8) else { throw ConfigError(file: path, reason: .notUTF8) }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws(ConfigError) -> LineupConfig {
        let reader = FieldReader(file: file)
        let root = try reader.document(text)
        let fields = try reader.mapping(root, path: nil, allowed: ["defaults", "channels", "api_hosts"])
        var defaults = ChannelConfig.template
        if let node = fields["defaults"] {
            try reader.apply(node, to: &defaults, path: "defaults", allowingIdentity: false)
        }
        guard let list = fields["channels"] else { throw reader.error(root, "channels", .missing) }
        guard case .sequence(let sequence) = list else { throw reader.error(list, "channels", .mustBe("a list of channels")) }
        guard sequence.count <= maximumChannels else {
            throw reader.error(list, "channels", .tooManyChannels(sequence.count, maximum: maximumChannels))
        }
        var channels: [ChannelConfig] = []
        var lines: [String: Int] = [:]
        for (index, node) in sequence.enumerated() {
            let path = "channels[\(index)]"
            let channel = try reader.channel(node, over: defaults, path: path)
            if let first = lines[channel.name] {
                throw reader.error(node, "\(path).name", .nameTaken(channel.name, line: first))
            }
            lines[channel.name] = node.mark?.line ?? 0
            channels.append(channel)
        }
        var config = LineupConfig(channels: channels, defaults: defaults)
        if let node = fields["api_hosts"] {
            guard case .sequence(let hosts) = node else { throw reader.error(node, "api_hosts", .mustBe("a list of hosts or networks")) }
            for (index, host) in hosts.enumerated() {
                guard let entry = host.string else { throw reader.error(host, "api_hosts[\(index)]", .mustBe("a host or a network")) }
                if let problem = Fetcher.HostRule.problem(with: entry) { throw reader.error(host, "api_hosts[\(index)]", .refused(problem)) }
                config.apiHosts.append(entry)
            }
        }
        return config
    }

    /// The channels `shard` meters; all of them without a shard.
    public func held(by shard: Shard?) -> LineupConfig {
        guard let shard else { return self }
        var held = self
        held.channels = channels.filter { shard.holds($0.name) }
        return held
    }

    /// One channel as JSON or YAML (the body of `PUT /channels/{name}`), over the config's
    /// defaults; the defaults' headers (credentials) only when it goes to a host the file's own
    /// channels use.
    public func channel(from text: String, source: String) throws(ConfigError) -> ChannelConfig {
        let reader = FieldReader(file: source)
        let node = try reader.document(text)
        if case .mapping(let mapping) = node, let named = mapping.first(where: { FieldReader.fileFields.contains($0.key.string ?? "") }) {
            throw reader.error(named.key, named.key.string, .refused("names a file on this machine: only the line-up file may"))
        }
        let channel = try reader.channel(node, over: defaults, path: nil)
        let fileHosts = Set(channels.compactMap { URL(string: $0.url)?.host?.lowercased() })
        guard let host = URL(string: channel.url)?.host?.lowercased(), fileHosts.contains(host) else {
            var withoutCredentials = defaults
            withoutCredentials.headers = []
            // A client certificate is a credential too.
            (withoutCredentials.tls.clientCertificate, withoutCredentials.tls.clientKey) = (nil, nil)
            return try reader.channel(node, over: withoutCredentials, path: nil)
        }
        return channel
    }
}

extension ChannelConfig {
    /// The defaults before a config's `defaults`: those of `id3-meter URL`.
    static let template = ChannelConfig(name: "", url: "")
}

/// Reads fields off Yams' node tree, which keeps every node's line.
private struct FieldReader {
    let file: String

    static let channelFields: Set<String> = ["name", "url", "headers", "variant", "program", "fps", "ad_model", "app_id", "app_name",
                                             "app_version", "alert_after", "live_start", "vod", "ca_file", "client_cert", "client_key",
                                             "audit_renditions"]

    /// Fields that name files on this machine: the line-up file's to give, never an API caller's.
    static let fileFields: Set<String> = ["ca_file", "client_cert", "client_key"]

    func error(_ node: Node?, _ field: String?, _ reason: ConfigError.Reason) -> ConfigError {
        ConfigError(file: file, line: node?.mark?.line, field: field, reason: reason)
    }

    func document(_ text: String) throws(ConfigError) -> Node {
        do {
            guard let node = try Yams.compose(yaml: text) else { throw error(nil, nil, .empty) }
            return node
        } catch let failure as ConfigError {
            throw failure
        } catch let failure as YamlError {
            throw ConfigError(file: file, line: Self.line(of: failure), field: nil, reason: .notYAML(Self.problem(failure)))
        } catch {
            throw ConfigError(file: file, reason: .notYAML("\(error)"))
        }
    }

    func mapping(_ node: Node, path: String?, allowed: Set<String>) throws(ConfigError) -> [String: Node] {
        guard case .mapping(let mapping) = node else { throw error(node, path, .mustBe("a mapping of fields")) }
        var fields: [String: Node] = [:]
        for (key, value) in mapping {
            guard let name = key.string else { throw error(key, path, .mustBe("a mapping with text keys")) }
            let field = path.map { "\($0).\(name)" } ?? name
            guard allowed.contains(name) else {
                throw error(key, field, .notAField(allowed: allowed.sorted()))
            }
            guard fields[name] == nil else { throw error(key, field, .givenTwice) }
            fields[name] = value
        }
        return fields
    }

    func channel(_ node: Node, over defaults: ChannelConfig, path: String?) throws(ConfigError) -> ChannelConfig {
        let fields = try mapping(node, path: path, allowed: Self.channelFields)
        for required in ["name", "url"] where fields[required] == nil {
            throw error(node, path.map { "\($0).\(required)" } ?? required, .missing)
        }
        var channel = defaults
        try apply(node, to: &channel, path: path, allowingIdentity: true)
        return channel
    }

    /// Sets each field `node` gives on `channel`, checked as the command line checks its options.
    func apply(_ node: Node, to channel: inout ChannelConfig, path: String?, allowingIdentity: Bool) throws(ConfigError) {
        let allowed = allowingIdentity ? Self.channelFields : Self.channelFields.subtracting(["name", "url"])
        for (name, value) in try mapping(node, path: path, allowed: allowed) {
            let field = path.map { "\($0).\(name)" } ?? name
            func text() throws(ConfigError) -> String {
                guard case .scalar(let scalar) = value else { throw error(value, field, .mustBe("a single value")) }
                return scalar.string
            }
            func number(in range: ClosedRange<Double>) throws(ConfigError) -> Double {
                guard let number = Double(try text()), number.isFinite, range.contains(number) else {
                    throw error(value, field, .mustBe("a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"))
                }
                return number
            }
            switch name {
            case "name":
                let name = try text()
                guard !name.isEmpty, name.count <= 200, !name.contains("/"), !name.contains(where: \.isNewline) else {
                    throw error(value, field, .mustBe("1 to 200 characters, without '/' or line breaks"))
                }
                channel.name = name
            case "url":
                let url = try text()
                if let problem = Location.problem(withInput: url) { throw error(value, field, .refused(problem)) }
                guard Location.hasScheme(url) else { throw error(value, field, .refused("'\(url)' must be a URL (http, https, udp, srt, rtp or tcp)")) }
                channel.url = url
            case "headers":
                channel.headers = try headers(value, field: field)
            case "variant":
                guard let variant = VariantChoice(try text()) else { throw error(value, field, .mustBe("lowest, highest or a position from 0")) }
                channel.variant = variant
            case "program":
                let number = try number(in: 1...65_535)
                guard number == number.rounded() else { throw error(value, field, .mustBe("a program_number from 1 to 65535")) }
                channel.program = Int(number)
            case "fps":
                channel.fps = try number(in: FrameRateChoice.allowedRates)
            case "ad_model":
                let model = try text()
                guard ["1", "2"].contains(model) else { throw error(value, field, .mustBe("1 (linear) or 2 (dynamic)")) }
                channel.adModel = model
            case "app_id": channel.appInfo.appID = try text()
            case "app_name": channel.appInfo.appName = try text()
            case "app_version": channel.appInfo.appVersion = try text()
            case "alert_after": channel.alertAfter = try number(in: 1...86_400)
            case "live_start": channel.liveStart = Int(try number(in: 1...1_000))
            case "audit_renditions":
                // Minutes; true or on: every `ChannelConfig.defaultRenditionAudit`; 0, false or off: never.
                switch try text() {
                case "true", "on", "yes": channel.renditionAudit = ChannelConfig.defaultRenditionAudit
                case "false", "off", "no": channel.renditionAudit = nil
                default:
                    let minutes = try number(in: 0...10_080)
                    channel.renditionAudit = minutes == 0 ? nil : max(minutes * 60, 1)
                }
            case "ca_file":
                // One file or a list of them.
                switch value {
                case .sequence(let items):
                    channel.tls.caFiles = try items.map { item throws(ConfigError) in
                        guard case .scalar(let scalar) = item else { throw error(item, field, .mustBe("file names")) }
                        return scalar.string
                    }
                default: channel.tls.caFiles = [try text()]
                }
            case "client_cert": channel.tls.clientCertificate = try text()
            case "client_key": channel.tls.clientKey = try text()
            case "vod":
                switch try text() {
                case "true", "yes": channel.isVOD = true
                case "false", "no": channel.isVOD = false
                default: throw error(value, field, .mustBe("true or false"))
                }
            default: break
            }
        }
    }

    /// `{Name: value, ...}` or `["Name: value", ...]`.
    private func headers(_ node: Node, field: String) throws(ConfigError) -> [Fetcher.Header] {
        var lines: [(String, Node)] = []
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping { lines.append(("\(key.string ?? ""): \(value.string ?? "")", key)) }
        case .sequence(let sequence):
            for item in sequence { lines.append((item.string ?? "", item)) }
        default:
            throw error(node, field, .mustBe("a mapping of names to values or a list of 'Name: value'"))
        }
        var headers: [Fetcher.Header] = []
        for (line, place) in lines {
            guard let header = Fetcher.Header(line) else { throw error(place, field, .refused("'\(line)' is not a header (Name: value)")) }
            headers.append(header)
        }
        return headers
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
        case .duplicatedKeysInMapping(_, let context): context.mark.line
        default: nil
        }
    }

    private static func problem(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _): problem
        case .duplicatedKeysInMapping(let duplicates, _): "\(duplicates.joined(separator: ", ")) given twice in one mapping"
        default: "\(error)"
        }
    }
}
