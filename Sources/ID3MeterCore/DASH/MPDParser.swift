import FoundationEssentials

/// Reads an MPD (`MPDDocument`, under its bounds) into an `MPD`: every Period's timing resolved
/// (§5.3.2.1), `BaseURL`s resolved level by level against the MPD's location, and the segment
/// information each Representation inherits from its AdaptationSet and Period merged into it
/// (§5.3.9.1: the lower level's attributes and children win).
package enum MPDParser {
    package static func parse(_ bytes: [UInt8], location: String) throws(MPDError) -> MPD {
        try parse(MPDDocument.parse(bytes), location: location)
    }

    /// The MPD of a document already read (its remote Periods resolved, say).
    package static func parse(_ document: MPDDocument, location: String) throws(MPDError) -> MPD {
        guard document.root.name == "MPD" else { throw MPDError(.notMPD(document.root.name)) }
        return try read(document.root, location: location)
    }

    private static func read(_ root: MPDDocument.Element, location: String) throws(MPDError) -> MPD {
        let isDynamic = root.attribute("type") == "dynamic"
        let bases = baseURLs(of: root, against: [BaseURL(url: location)])
        var mpd = MPD(isDynamic: isDynamic,
                      availabilityStartTime: try date(root, "availabilityStartTime"),
                      publishTime: try date(root, "publishTime"),
                      mediaPresentationDuration: try duration(root, "mediaPresentationDuration"),
                      minimumUpdatePeriod: try duration(root, "minimumUpdatePeriod"),
                      timeShiftBufferDepth: try duration(root, "timeShiftBufferDepth"),
                      suggestedPresentationDelay: try duration(root, "suggestedPresentationDelay"),
                      maxSegmentDuration: try duration(root, "maxSegmentDuration"),
                      locations: root.children(named: "Location").map { Location.resolve(trimmed($0.text), against: location) },
                      utcTimings: root.children(named: "UTCTiming").compactMap { timing in
                          timing.attribute("schemeIdUri").map { UTCTiming(scheme: $0, value: timing.attribute("value") ?? "") }
                      },
                      periods: [])
        let elements = root.children(named: "Period")
        guard !elements.isEmpty else { throw MPDError(.noPeriod) }
        // Without it nothing says which segments exist: "now" would be every segment a template can name.
        if isDynamic, mpd.availabilityStartTime == nil { throw MPDError(.dynamicWithoutStart) }
        var previousEnd: Double? = 0
        for (index, element) in elements.enumerated() {
            // §5.3.2.1: a Period without `start` follows the one before; the first of a static MPD starts at 0.
            let start = try duration(element, "start") ?? previousEnd ?? 0
            var period = Period(id: element.attribute("id"), index: index, start: start, duration: try duration(element, "duration"),
                                adaptationSets: [], eventStreams: [],
                                remoteReference: element.xlinkHref.map { Location.resolve($0, against: location) })
            let periodBases = baseURLs(of: element, against: bases)
            let inherited = Inherited(segment: SegmentInformation(element))
            period.adaptationSets = mergingCopies(try element.children(named: "AdaptationSet").map { set throws(MPDError) in
                try adaptationSet(set, bases: periodBases, inherited: inherited)
            })
            period.eventStreams = try element.children(named: "EventStream").map(eventStream)
            mpd.periods.append(period)
            previousEnd = period.duration.map { start + $0 }
        }
        // A Period's length, when not given, runs to the next one's start or the presentation's end.
        for index in mpd.periods.indices where mpd.periods[index].duration == nil {
            if index + 1 < mpd.periods.count {
                mpd.periods[index].duration = max(0, mpd.periods[index + 1].start - mpd.periods[index].start)
            } else if let total = mpd.mediaPresentationDuration {
                mpd.periods[index].duration = max(0, total - mpd.periods[index].start)
            }
        }
        return mpd
    }

    /// What a level hands down to the one below it.
    private struct Inherited {
        var segment: SegmentInformation
        var inband: [EventScheme] = []
        var protection: [ContentProtection] = []
        var contentType: String?
        var mimeType: String?
        var codecs: String?
        var frameRate: Double?
    }

    private static func adaptationSet(_ element: MPDDocument.Element, bases: [BaseURL], inherited: Inherited) throws(MPDError) -> AdaptationSet {
        let setBases = baseURLs(of: element, against: bases)
        var own = inherited
        own.segment = inherited.segment.overridden(by: SegmentInformation(element))
        own.inband += inbandStreams(of: element)
        own.protection += protection(of: element)
        own.mimeType = element.attribute("mimeType") ?? inherited.mimeType
        own.contentType = element.attribute("contentType") ?? contentType(ofMime: own.mimeType)
        own.codecs = element.attribute("codecs")
        own.frameRate = frameRate(element) ?? inherited.frameRate
        var representations: [Representation] = []
        for item in element.children(named: "Representation") {
            let read = try representation(item, bases: setBases, inherited: own)
            // The same id again in the set: the same encoding from another CDN, one more copy.
            if let first = representations.firstIndex(where: { $0.id == read.id }) {
                representations[first].addCopies(of: read, upTo: maximumCopies)
            } else {
                representations.append(read)
            }
        }
        return AdaptationSet(id: element.attribute("id"), contentType: own.contentType, representations: representations)
    }

    /// ISO/IEC 23009-1 §5.3.5.2: a Representation's id is unique in its Period unless it is
    /// functionally identical to another; the same id in a later AdaptationSet (one set per CDN)
    /// is one more copy of the first, as the same id again in one set is. A set left with no
    /// Representation of its own goes.
    private static func mergingCopies(_ sets: [AdaptationSet]) -> [AdaptationSet] {
        var merged = sets
        var first: [String: (set: Int, representation: Int)] = [:]
        for setIndex in merged.indices {
            var kept: [Representation] = []
            for representation in merged[setIndex].representations {
                if let place = first[representation.id] {
                    merged[place.set].representations[place.representation].addCopies(of: representation, upTo: maximumCopies)
                } else {
                    first[representation.id] = (setIndex, kept.count)
                    kept.append(representation)
                }
            }
            merged[setIndex].representations = kept
        }
        return merged.filter { !$0.representations.isEmpty }
    }

    private static func representation(_ element: MPDDocument.Element, bases: [BaseURL], inherited: Inherited) throws(MPDError) -> Representation {
        let id = element.attribute("id") ?? ""
        let bandwidthText = element.attribute("bandwidth") ?? "0"
        guard let bandwidth = Int(bandwidthText), bandwidth >= 0 else {
            throw MPDError(.badAttribute(element: "Representation", name: "bandwidth", value: bandwidthText))
        }
        let mimeType = element.attribute("mimeType") ?? inherited.mimeType
        let segment = inherited.segment.overridden(by: SegmentInformation(element))
        let located = baseURLs(of: element, against: bases)
        return Representation(id: id, bandwidth: bandwidth, mimeType: mimeType, codecs: element.attribute("codecs") ?? inherited.codecs,
                              contentType: element.attribute("contentType") ?? inherited.contentType ?? contentType(ofMime: mimeType),
                              frameRate: frameRate(element) ?? inherited.frameRate,
                              baseURLs: located.map(\.url),
                              baseURLAvailabilityTimeOffsets: Dictionary(located.filter { $0.availabilityTimeOffset != 0 }
                                  .map { ($0.url, $0.availabilityTimeOffset) }, uniquingKeysWith: { first, _ in first }),
                              copyGroups: Dictionary(located.map { ($0.url, Representation.CopyGroup(priority: $0.priority, serviceLocation: $0.serviceLocation ?? $0.url)) },
                                                     uniquingKeysWith: { first, _ in first }),
                              addressing: try segment.addressing(representationID: id, bandwidth: bandwidth),
                              inbandEventStreams: inherited.inband + inbandStreams(of: element),
                              protection: inherited.protection + protection(of: element))
    }

    /// `SegmentTemplate`, `SegmentList`, `SegmentBase` as one level writes them, before merging.
    private struct SegmentInformation {
        var template: MPDDocument.Element?
        var list: MPDDocument.Element?
        var base: MPDDocument.Element?

        init(template: MPDDocument.Element? = nil, list: MPDDocument.Element? = nil, base: MPDDocument.Element? = nil) {
            (self.template, self.list, self.base) = (template, list, base)
        }

        init(_ element: MPDDocument.Element) {
            self.init(template: element.child(named: "SegmentTemplate"), list: element.child(named: "SegmentList"),
                      base: element.child(named: "SegmentBase"))
        }

        /// This level's information over `lower`'s: attributes and children of the lower level win.
        func overridden(by lower: SegmentInformation) -> SegmentInformation {
            SegmentInformation(template: Self.merge(template, lower.template), list: Self.merge(list, lower.list),
                               base: Self.merge(base, lower.base))
        }

        private static func merge(_ upper: MPDDocument.Element?, _ lower: MPDDocument.Element?) -> MPDDocument.Element? {
            guard var merged = upper else { return lower }
            guard let lower else { return upper }
            merged.attributes.merge(lower.attributes) { _, lower in lower }
            for name in Set(lower.children.map(\.name)) {
                merged.children.removeAll { $0.name == name }
                merged.children += lower.children(named: name)
            }
            return merged
        }

        /// The form the Representation ends with: the most specific one present. A template with
        /// an `index` is one resource, indexed by the `sidx` it holds: a `SegmentBase` named by
        /// the filled template (as shaka reads it, the index winning over a duration or timeline).
        func addressing(representationID id: String, bandwidth: Int) throws(MPDError) -> SegmentAddressing? {
            if let template {
                func parsed(_ name: String) throws(MPDError) -> URLTemplate? {
                    try template.attribute(name).map { text throws(MPDError) in
                        guard let parsed = URLTemplate(text) else { throw MPDError(.badTemplate(text)) }
                        return parsed
                    }
                }
                let initialization = try parsed("initialization")
                var timing = try MPDParser.timing(template)
                if let index = try parsed("index") {
                    timing.timeline = nil
                    let filled = initialization?.filled(representationID: id, bandwidth: bandwidth)
                    return .base(SegmentBase(timing: timing, initialization: filled.map { ResourceRange(uri: $0, range: nil) },
                                             indexRange: nil, resource: index.filled(representationID: id, bandwidth: bandwidth)))
                }
                return .template(SegmentTemplate(timing: timing, media: try parsed("media"), initialization: initialization))
            }
            if let list {
                let segments = list.children(named: "SegmentURL").map { url in
                    ResourceRange(uri: url.attribute("media"), range: url.attribute("mediaRange").flatMap(MPDParser.byteRange))
                }
                return .list(SegmentList(timing: try MPDParser.timing(list), initialization: MPDParser.initialization(of: list),
                                         segments: segments))
            }
            if let base {
                let indexRange = try base.attribute("indexRange").map { text throws(MPDError) in
                    guard let range = MPDParser.byteRange(text) else {
                        throw MPDError(.badAttribute(element: "SegmentBase", name: "indexRange", value: text))
                    }
                    return range
                }
                return .base(SegmentBase(timing: try MPDParser.timing(base), initialization: MPDParser.initialization(of: base),
                                         indexRange: indexRange, resource: nil))
            }
            return nil
        }
    }

    private static func timing(_ element: MPDDocument.Element) throws(MPDError) -> SegmentTiming {
        var timing = SegmentTiming()
        timing.timescale = try integer(element, "timescale", minimum: 1) ?? 1
        timing.presentationTimeOffset = try integer(element, "presentationTimeOffset", minimum: 0) ?? 0
        timing.duration = try integer(element, "duration", minimum: 1)
        timing.startNumber = try integer(element, "startNumber", minimum: 0) ?? 1
        timing.endNumber = try integer(element, "endNumber", minimum: 0)
        timing.availabilityTimeOffset = availabilityTimeOffset(element)
        if let timeline = element.child(named: "SegmentTimeline") {
            timing.timeline = try timeline.children(named: "S").map { entry throws(MPDError) in
                TimelineEntry(time: try integer(entry, "t", minimum: 0), number: try integer(entry, "n", minimum: 0),
                              duration: try integer(entry, "d", minimum: 1) ?? 0,
                              repeatCount: try integer(entry, "r", minimum: -1) ?? 0)
            }.filter { $0.duration > 0 }
        }
        // Segments under a millisecond are no media, and would make a look back of minutes billions of steps.
        for duration in [timing.duration].compactMap({ $0 }) + (timing.timeline ?? []).map(\.duration)
        where duration.multipliedReportingOverflow(by: 1_000).partialValue < timing.timescale {
            throw MPDError(.segmentTooShort(duration: duration, timescale: timing.timescale))
        }
        return timing
    }

    /// `Initialization` (`sourceURL`, `range`), or the older `@initialization` attribute of a list or base.
    private static func initialization(of element: MPDDocument.Element) -> ResourceRange? {
        if let child = element.child(named: "Initialization") {
            return ResourceRange(uri: child.attribute("sourceURL"), range: child.attribute("range").flatMap(byteRange))
        }
        return element.attribute("initialization").map { ResourceRange(uri: $0, range: nil) }
    }

    private static func eventStream(_ element: MPDDocument.Element) throws(MPDError) -> EventStream {
        let scheme = EventScheme(schemeIDURI: element.attribute("schemeIdUri") ?? "", value: element.attribute("value"))
        let events = try element.children(named: "Event").map { event throws(MPDError) in
            var note: String?
            let encoded = event.attribute("messageData") ?? trimmed(event.text)
            var data = Array(encoded.utf8)
            if event.attribute("contentEncoding") == "base64" {
                data = base64(encoded) ?? []
                if data.isEmpty, !encoded.isEmpty { note = "Event's base64 messageData does not decode" }
            } else if scheme.carriesID3, let decoded = base64(encoded) {
                // An ID3 tag is binary: written in the MPD it can only be base64, whether or not it says so.
                data = decoded
                note = "Event without contentEncoding=\"base64\"; its messageData read as base64"
            }
            return EventStream.Event(presentationTime: try integer(event, "presentationTime", minimum: 0) ?? 0,
                                     duration: try integer(event, "duration", minimum: 0), id: try integer(event, "id", minimum: 0),
                                     messageData: data, note: note)
        }
        return EventStream(scheme: scheme, timescale: try integer(element, "timescale", minimum: 1) ?? 1,
                           presentationTimeOffset: try integer(element, "presentationTimeOffset", minimum: 0) ?? 0, events: events)
    }

    /// Base64 as MPDs carry it: whitespace and line breaks between the characters are allowed.
    private static func base64(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text, options: .ignoreUnknownCharacters).map(Array.init)
    }

    private static func inbandStreams(of element: MPDDocument.Element) -> [EventScheme] {
        element.children(named: "InbandEventStream").compactMap { stream in
            stream.attribute("schemeIdUri").map { EventScheme(schemeIDURI: $0, value: stream.attribute("value")) }
        }
    }

    private static func protection(of element: MPDDocument.Element) -> [ContentProtection] {
        element.children(named: "ContentProtection").compactMap { descriptor in
            descriptor.attribute("schemeIdUri").map { ContentProtection(scheme: $0, value: descriptor.attribute("value")) }
        }
    }

    /// The most copies a Representation is read from: BaseURLs multiply level by level.
    static let maximumCopies = 8

    /// A `BaseURL` resolved through the levels above it, with the `availabilityTimeOffset`s
    /// they give it (§5.3.9.5.3: a level's adds to the one above's).
    private struct BaseURL {
        var url: String
        var availabilityTimeOffset = 0.0
        /// DVB-DASH's, from the nearest level that gives them.
        var priority: Int?
        var serviceLocation: String?
    }

    /// The element's `BaseURL`s resolved against each of `bases` (the level above's), in the
    /// order to try them: DVB-DASH's `priority` (lowest first), then `weight` (highest first; a
    /// player draws among equals by weight, we take the heaviest), then document order. `bases`
    /// when it has none.
    private static func baseURLs(of element: MPDDocument.Element, against bases: [BaseURL]) -> [BaseURL] {
        func number(_ element: MPDDocument.Element, _ name: String) -> Int? {
            element.attributes.first { $0.key == name || $0.key.hasSuffix(":" + name) }.flatMap { Int($0.value) }
        }
        let own = element.children(named: "BaseURL").enumerated()
            .map { (place: $0.offset, text: trimmed($0.element.text), priority: number($0.element, "priority"),
                    weight: number($0.element, "weight") ?? 1, offset: availabilityTimeOffset($0.element),
                    location: $0.element.attribute("serviceLocation")) }
            .filter { !$0.text.isEmpty }
            .sorted { ($0.priority ?? 1, -$0.weight, $0.place) < ($1.priority ?? 1, -$1.weight, $1.place) }
        guard !own.isEmpty else { return bases }
        var resolved: [BaseURL] = []
        for base in bases {
            for url in own.map({ BaseURL(url: Location.resolve($0.text, against: base.url), availabilityTimeOffset: base.availabilityTimeOffset + $0.offset,
                                         priority: $0.priority ?? base.priority, serviceLocation: $0.location ?? base.serviceLocation) })
            where !resolved.contains(where: { $0.url == url.url }) {
                resolved.append(url)
                if resolved.count == maximumCopies { return resolved }
            }
        }
        return resolved
    }

    /// `availabilityTimeOffset` in seconds: `INF` (every segment available from its start, as
    /// low-latency packagers write it) as infinity; absent, negative or unreadable as 0.
    private static func availabilityTimeOffset(_ element: MPDDocument.Element) -> Double {
        guard let text = element.attribute("availabilityTimeOffset").map(trimmed) else { return 0 }
        if text == "INF" { return .infinity }
        return Double(text).flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? 0
    }

    private static func contentType(ofMime mime: String?) -> String? {
        mime.flatMap { $0.split(separator: "/").first.map(String.init) }
    }

    private static func trimmed(_ text: String) -> String { String(text.trimmingWhitespace) }

    /// Times, counts and numbers past 2^53 (28 years of 10 MHz ticks) are refused: below it, the
    /// sums a timeline makes of them cannot overflow.
    package static let maximumInteger = 1 << 53

    private static func integer(_ element: MPDDocument.Element, _ name: String, minimum: Int) throws(MPDError) -> Int? {
        guard let text = element.attribute(name) else { return nil }
        guard let value = Int(trimmed(text)), value >= minimum, value <= maximumInteger else {
            throw MPDError(.badAttribute(element: element.name, name: name, value: text))
        }
        return value
    }

    private static func duration(_ element: MPDDocument.Element, _ name: String) throws(MPDError) -> Double? {
        guard let text = element.attribute(name) else { return nil }
        guard let seconds = XMLDuration.seconds(text) else { throw MPDError(.badAttribute(element: element.name, name: name, value: text)) }
        return seconds
    }

    private static func date(_ element: MPDDocument.Element, _ name: String) throws(MPDError) -> Date? {
        guard let text = element.attribute(name) else { return nil }
        guard let date = ProgramDateTime.parse(Substring(trimmed(text))) ?? dateWithoutZone(trimmed(text)) else {
            throw MPDError(.badAttribute(element: element.name, name: name, value: text))
        }
        return date
    }

    /// An `xs:dateTime` without a zone is UTC for DASH clients (dash.js, Media3): packagers write them.
    private static func dateWithoutZone(_ text: String) -> Date? {
        guard !text.isEmpty, !text.hasSuffix("Z"), !text.contains("+") else { return nil }
        return ProgramDateTime.parse(Substring(text + "Z"))
    }

    /// `frameRate`: `30`, or `30000/1001`.
    private static func frameRate(_ element: MPDDocument.Element) -> Double? {
        guard let text = element.attribute("frameRate") else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard let numerator = Double(parts[0]), parts.count <= 2 else { return nil }
        let rate = parts.count == 2 ? Double(parts[1]).map { numerator / $0 } : numerator
        // A rate that cannot be is no rate: the meter then probes, as for an HLS variant without one.
        return rate.flatMap { $0.isFinite && $0 > 0 && $0 <= 1_000 ? $0 : nil }
    }

    /// `first-last`, both inclusive (§5.3.9.2).
    static func byteRange(_ text: String) -> ByteRange? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]), let last = Int(parts[1]), first >= 0, last >= first,
              last < Int.max else { return nil }
        return ByteRange(offset: first, length: last - first + 1)
    }
}
