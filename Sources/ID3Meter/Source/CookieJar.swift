import Foundation
import Synchronization

/// The cookies of one player session (a stream metered or scanned, a `serve` channel), kept as a
/// browser keeps them (RFC 6265): a CDN that hands its token as a cookie with the master playlist
/// (Akamai's `hdntl`) and refuses every later request without it is read as a player reads it.
///
/// Each is sent only where it applies (domain, path, `Secure`, not expired). A jar is never
/// shared between sessions, and its values never reach a log or a record. Bounded: a cookie of
/// at most `maximumCookieBytes`, at most `maximumPerDomain` a domain and `maximumCookies` in all,
/// the least recently set going first.
package final class CookieJar: Sendable {
    struct Cookie: Sendable, Equatable {
        var name: String
        var value: String
        /// Lower case, without a leading dot.
        var domain: String
        /// Sent to `domain` alone, not its subdomains (no `Domain` attribute).
        var hostOnly: Bool
        var path: String
        var secure: Bool
        var expires: Date?
        /// Order of setting, for eviction and for cookies of equal paths.
        var order: UInt64
    }

    package static let maximumCookieBytes = 4_096
    static let maximumPerDomain = 50
    package static let maximumCookies = 300
    static let longestLife = 400.0 * 86_400

    private let state = Mutex<(cookies: [Cookie], counter: UInt64)>(([], 0))

    public init() {}

    /// How many cookies the jar holds now (expired ones included until the next change).
    public var count: Int { state.withLock { $0.cookies.count } }

    /// Takes the `Set-Cookie` header values of a response to `url`.
    package func store(_ values: [String], from url: URL, now: Date = Date()) {
        guard !values.isEmpty, let host = url.host?.lowercased(), !host.isEmpty else { return }
        let parsed = values.compactMap { Self.parse($0, host: host, requestPath: url.path, now: now) }
        guard !parsed.isEmpty else { return }
        state.withLock { state in
            state.cookies.removeAll { $0.expires.map { $0 <= now } ?? false }
            for var cookie in parsed {
                state.cookies.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
                // An expiry in the past only deletes (how a server takes a cookie back).
                if let expires = cookie.expires, expires <= now { continue }
                state.counter += 1
                cookie.order = state.counter
                state.cookies.append(cookie)
                let sameDomain = state.cookies.filter { $0.domain == cookie.domain }
                if sameDomain.count > Self.maximumPerDomain, let oldest = sameDomain.min(by: { $0.order < $1.order }) {
                    state.cookies.removeAll { $0 == oldest }
                }
                if state.cookies.count > Self.maximumCookies, let oldest = state.cookies.min(by: { $0.order < $1.order }) {
                    state.cookies.removeAll { $0 == oldest }
                }
            }
        }
    }

    /// The `Cookie` header for a request to `url`, or `nil` when no cookie applies: longer
    /// paths first, then the order they were set in (RFC 6265 5.4).
    package func header(for url: URL, now: Date = Date()) -> String? {
        guard let host = url.host?.lowercased() else { return nil }
        let secure = url.scheme?.lowercased() == "https"
        let path = url.path.isEmpty ? "/" : url.path
        let matching = state.withLock { state in
            state.cookies.filter { cookie in
                (cookie.hostOnly ? host == cookie.domain : Self.domainMatches(host, cookie.domain))
                    && Self.pathMatches(path, cookie.path) && (secure || !cookie.secure)
                    && (cookie.expires.map { $0 > now } ?? true)
            }
        }
        guard !matching.isEmpty else { return nil }
        return matching.sorted { ($0.path.count, $1.order) > ($1.path.count, $0.order) }
            .map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// RFC 6265 5.2; `nil` for a cookie to ignore (malformed, too large, or for a domain the
    /// response's host may not set).
    static func parse(_ header: String, host: String, requestPath: String, now: Date) -> Cookie? {
        guard header.utf8.count <= maximumCookieBytes else { return nil }
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = parts.first else { return nil }
        let name: String, value: String
        if let equals = pair.firstIndex(of: "=") {
            (name, value) = (pair[..<equals].trimmingCharacters(in: .whitespaces), pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces))
        } else {
            (name, value) = ("", pair.trimmingCharacters(in: .whitespaces))
        }
        guard !(name.isEmpty && value.isEmpty), !(name + value).contains(where: { $0.isNewline || $0 == "\0" }) else { return nil }
        var cookie = Cookie(name: name, value: value, domain: host, hostOnly: true, path: defaultPath(requestPath), secure: false,
                            expires: nil, order: 0)
        var maxAge: Date?, expires: Date?
        for attribute in parts.dropFirst() {
            let (key, argument): (String, String)
            if let equals = attribute.firstIndex(of: "=") {
                key = attribute[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                argument = attribute[attribute.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            } else {
                (key, argument) = (attribute.trimmingCharacters(in: .whitespaces).lowercased(), "")
            }
            switch key {
            case "expires": expires = CookieDate.parse(argument) ?? expires
            case "max-age":
                let negative = argument.hasPrefix("-")
                let digits = negative ? argument.dropFirst() : Substring(argument)
                guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { continue }
                // Browsers cap a cookie's life at 400 days; a longer number is that too.
                let seconds = negative ? 0 : digits.count > 9 ? Self.longestLife : min(Double(digits)!, Self.longestLife)
                maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(seconds)
            case "domain":
                var domain = argument.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                guard !domain.isEmpty else { continue }
                cookie.domain = domain
                cookie.hostOnly = false
            case "path":
                cookie.path = argument.hasPrefix("/") ? argument : defaultPath(requestPath)
            case "secure": cookie.secure = true
            default: continue
            }
        }
        cookie.expires = maxAge ?? expires
        if !cookie.hostOnly {
            // A host sets cookies for itself or a domain above it, never for a bare top-level
            // domain (no public-suffix list here: one label is the part of it that matters) or,
            // being an address, for anything but itself.
            guard domainMatches(host, cookie.domain), cookie.domain.contains(".") || cookie.domain == host else { return nil }
            if cookie.domain == host { cookie.hostOnly = isAddress(host) }
            else if isAddress(host) { return nil }
        }
        return cookie
    }

    /// RFC 6265 5.1.3.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        host == domain || (host.hasSuffix("." + domain) && !isAddress(host))
    }

    /// RFC 6265 5.1.4.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// RFC 6265 5.1.4: the request path up to its last `/`, or `/`.
    static func defaultPath(_ path: String) -> String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    private static func isAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }
}

/// RFC 6265 5.1.1: the lenient date format of `Expires` (any order of tokens, two-digit years).
enum CookieDate {
    static func parse(_ text: String) -> Date? {
        var time: (Int32, Int32, Int32)?, day: Int32?, month: Int32?, year: Int32?
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let delimiter: (Character) -> Bool = { character in
            guard let ascii = character.asciiValue else { return false }
            return ascii == 0x09 || (0x20...0x2F).contains(ascii) || (0x3B...0x40).contains(ascii) || (0x5B...0x60).contains(ascii)
                || (0x7B...0x7E).contains(ascii)
        }
        for token in text.split(whereSeparator: delimiter) {
            let digits = token.prefix { $0.isASCII && $0.isNumber }
            if time == nil {
                let fields = token.split(separator: ":", omittingEmptySubsequences: false)
                if fields.count == 3, fields.allSatisfy({ (1...2).contains($0.prefix { $0.isASCII && $0.isNumber }.count) }) {
                    let values = fields.map { Int32($0.prefix { $0.isASCII && $0.isNumber })! }
                    time = (values[0], values[1], values[2])
                    continue
                }
            }
            if day == nil, (1...2).contains(digits.count) { day = Int32(digits); continue }
            if month == nil, let index = months.firstIndex(of: token.prefix(3).lowercased()) { month = Int32(index); continue }
            if year == nil, (2...4).contains(digits.count) { year = Int32(digits); continue }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, year <= 9999, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday) = (year - 1900, month, day)
        (fields.tm_hour, fields.tm_min, fields.tm_sec) = (hour, minute, second)
        return Date(timeIntervalSince1970: Double(timegm(&fields)))
    }
}
