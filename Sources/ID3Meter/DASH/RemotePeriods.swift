import ID3MeterCore

extension MPDLoader {
    /// At most this many Periods' references are resolved in one MPD, and a reference brings at
    /// most `maximumPeriodsPerReference`; what a resolved Period references in turn is not followed.
    static let maximumRemotePeriods = 16
    static let maximumPeriodsPerReference = 32
    /// `xlink:href` to this removes the Period (ISO/IEC 23009-1 §5.5.3).
    static let resolveToZero = "urn:mpeg:dash:resolve-to-zero:2013"

    /// What resolving an MPD's remote Periods gave: the document with them in place, the
    /// references that failed and why, and the resolved ones for the next refresh to reuse.
    struct ResolvedPeriods {
        var document: MPDDocument
        var failures: [String: RemotePeriodFailure] = [:]
        var resolved: [String: [MPDDocument.Element]] = [:]
    }

    /// Why a remote Period was not had.
    enum RemotePeriodFailure: Error, Sendable, CustomStringConvertible {
        case tooManyReferences(Int)
        case refused(ReferenceRule.Refusal)
        case fetch(FetchFailure)
        case unreadable(MPDError)
        case tooManyPeriods(Int)

        var description: String {
            switch self {
            case .tooManyReferences(let limit): "more than \(limit) remote Periods in one MPD"
            case .refused(let refusal): "\(refusal)"
            case .fetch(let failure): "\(failure)"
            case .unreadable(let error): "\(error)"
            case .tooManyPeriods(let count): "\(count) Periods, more than \(MPDLoader.maximumPeriodsPerReference)"
            }
        }
    }

    /// Resolves the Periods whose `xlink:href` is to be resolved on load (`xlink:actuate="onLoad"`,
    /// as server-side ad insertion writes ad breaks), as dash.js does: each reference fetched
    /// under the reference rule with a playlist's limits, its Periods put in the referencing one's
    /// place (keeping its `start` when the first has none), a failed one left in place, unread,
    /// and reported. `onRequest` references stay unresolved, as players leave them; one to
    /// `resolve-to-zero` is removed, as dash.js and shaka remove it. `known`: what
    /// the last refresh resolved, reused without a fetch.
    func resolvingRemotePeriods(of document: MPDDocument, location: String, known: [String: [MPDDocument.Element]]) async -> ResolvedPeriods {
        var result = ResolvedPeriods(document: document)
        var children: [MPDDocument.Element] = []
        var references = 0
        for child in document.root.children {
            // Removed whatever its `actuate` says, as dash.js and shaka remove it (nothing to fetch).
            if child.name == "Period", child.xlinkHref == Self.resolveToZero { continue }
            guard child.name == "Period", let href = child.xlinkHref, child.resolvesOnLoad else {
                children.append(child)
                continue
            }
            let url = Location.resolve(href, against: location)
            references += 1
            guard references <= Self.maximumRemotePeriods else {
                result.failures[url] = .tooManyReferences(Self.maximumRemotePeriods)
                children.append(child)
                continue
            }
            switch await remotePeriods(url, from: location, known: known) {
            case .success(var periods):
                result.resolved[url] = periods
                if var first = periods.first, first.attribute("start") == nil, let start = child.attribute("start") {
                    first.attributes["start"] = start
                    periods[0] = first
                }
                children += periods
            case .failure(let reason):
                result.failures[url] = reason
                children.append(child)
            }
        }
        result.document.root.children = children
        return result
    }

    /// The Periods at `url`, without their own references to resolve; or why there are none.
    private func remotePeriods(_ url: String, from location: String, known: [String: [MPDDocument.Element]]) async
        -> Result<[MPDDocument.Element], RemotePeriodFailure> {
        if let periods = known[url] { return .success(periods) }
        if let refusal = ReferenceRule.refusal(of: url, from: location) { return .failure(.refused(refusal)) }
        let bytes: [UInt8]
        do throws(FetchFailure) { bytes = try await fetcher.fetch(url, as: .playlist, retrying: false) } catch {
            return .failure(.fetch(error))
        }
        let elements: [MPDDocument.Element]
        do throws(MPDError) { elements = try MPDDocument.fragment(bytes) } catch { return .failure(.unreadable(error)) }
        let periods = elements.filter { $0.name == "Period" }
        guard periods.count <= Self.maximumPeriodsPerReference else {
            return .failure(.tooManyPeriods(periods.count))
        }
        return .success(periods.map { period in
            var period = period
            // Not followed again: what a resolved Period references is left as it is, unread.
            period.attributes = period.attributes.filter { !$0.key.hasSuffix(":actuate") }
            return period
        })
    }
}
