/// What a player adds to the requests for an interstitial's assets (Apple's HLS Interstitials;
/// hls.js, `interstitial-event.ts` and `interstitial-asset-list.ts`): `_HLS_primary_id`, the
/// primary's playback session, on the asset list and on each asset's playlist; and
/// `_HLS_start_offset`, on the asset list of a break joined part way in, the seconds into it,
/// so that an ad server may answer with what remains. Only HTTP(S) URLs carry them; a
/// parameter already in the query is replaced, as a URL's search parameters are set.
package enum InterstitialRequest {
    package static func url(_ uri: String, primaryID: String, startOffset: Double? = nil) -> String {
        // Only what is fetched over HTTP carries them (a `file:` reference is refused as listed).
        guard uri.lowercased().hasPrefix("http:") || uri.lowercased().hasPrefix("https:") else { return uri }
        var url = setting("_HLS_primary_id", to: primaryID, in: uri)
        if let startOffset, let seconds = seconds(startOffset) { url = setting("_HLS_start_offset", to: seconds, in: url) }
        return url
    }

    private static func setting(_ name: String, to value: String, in uri: String) -> String {
        let fragmentStart = uri.firstIndex(of: "#") ?? uri.endIndex
        let beforeFragment = uri[..<fragmentStart]
        let queryStart = beforeFragment.firstIndex(of: "?")
        var items = queryStart.map { beforeFragment[beforeFragment.index(after: $0)...].split(separator: "&").map(String.init) } ?? []
        items.removeAll { $0 == name || $0.hasPrefix(name + "=") }
        items.append(name + "=" + value)
        return beforeFragment[..<(queryStart ?? fragmentStart)] + "?" + items.joined(separator: "&") + uri[fragmentStart...]
    }

    /// Seconds to the millisecond, without trailing zeros (`10`, `7.5`), as hls.js writes them;
    /// `nil` under a millisecond (hls.js leaves the parameter out).
    private static func seconds(_ value: Double) -> String? {
        guard value.isFinite, value >= 0.0005, value < 1e9 else { return nil }
        let milliseconds = Int((value * 1_000).rounded())
        let fraction = milliseconds % 1_000
        guard fraction != 0 else { return String(milliseconds / 1_000) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(milliseconds / 1_000).\(digits)"
    }
}
