import FoundationEssentials

/// A Media Presentation Description (ISO/IEC 23009-1): what a DASH client plays, with what it
/// says about timing, as far as reading its timed metadata needs it. References are resolved
/// (`BaseURL` at every level, against the MPD's own location).
package struct MPD: Sendable {
    /// Remote Periods (`xlink:href`) that could not be resolved, by their URL, with why.
    package var remoteFailures: [String: any Error & Sendable] = [:]
    /// `type="dynamic"`: a live presentation, its segments available as its clock says.
    package var isDynamic: Bool
    package var availabilityStartTime: Date?
    package var publishTime: Date?
    package var mediaPresentationDuration: Double?
    /// How long the MPD stays good; `nil` on a dynamic MPD: it will not change.
    package var minimumUpdatePeriod: Double?
    package var timeShiftBufferDepth: Double?
    package var suggestedPresentationDelay: Double?
    package var maxSegmentDuration: Double?
    /// `Location`: where to fetch the MPD again.
    package var locations: [String]
    /// Where it was answered from, after redirects: its relative URLs are of it, and a live
    /// MPD is refreshed there.
    package var answeredFrom: String?
    package var utcTimings: [UTCTiming]
    package var periods: [Period]

    /// The Period whose `index` this is.
    package func period(at index: Int) -> Period? { periods.first { $0.index == index } }
}

/// `UTCTiming`: how the client is to learn the server's clock.
package struct UTCTiming: Sendable, Equatable {
    package var scheme: String
    package var value: String

    /// The schemes a client can act on here; the others are told apart so a warning can name them.
    package enum Method: Sendable, Equatable {
        /// `http-iso`, `http-xsdate`: an HTTP GET whose body is an ISO 8601 time.
        case httpDate(url: String)
        /// `http-head`: the `Date` header of a HEAD request.
        case httpHead(url: String)
        /// `direct`: the time is in the MPD itself.
        case direct(Date)
        case unsupported
    }

    package var method: Method {
        let name = scheme.lowercased()
        if name.hasPrefix("urn:mpeg:dash:utc:http-iso:") || name.hasPrefix("urn:mpeg:dash:utc:http-xsdate:") {
            return value.split(separator: " ").first.map { .httpDate(url: String($0)) } ?? .unsupported
        }
        if name.hasPrefix("urn:mpeg:dash:utc:http-head:") {
            return value.split(separator: " ").first.map { .httpHead(url: String($0)) } ?? .unsupported
        }
        if name.hasPrefix("urn:mpeg:dash:utc:direct:"), let date = ProgramDateTime.parse(Substring(value)) { return .direct(date) }
        return .unsupported
    }
}

/// A `Period`: a stretch of the presentation with its own media timeline.
package struct Period: Sendable {
    package var id: String?
    /// Its place among the MPD's Periods: what tells two periods apart when they have no id.
    package var index: Int
    /// Seconds from the presentation's start (dynamic: from `availabilityStartTime`).
    package var start: Double
    /// `nil` when it runs until the MPD says otherwise (a live period).
    package var duration: Double?
    package var adaptationSets: [AdaptationSet]
    package var eventStreams: [EventStream]
    /// `xlink:href`: the Period's content is elsewhere (a remote period), resolved.
    package var remoteReference: String?

    /// An identity that survives a refresh of the MPD: the id, else the start.
    package var key: String { id ?? "@\(start)" }
}

/// An `AdaptationSet`: interchangeable encodings of one content component.
package struct AdaptationSet: Sendable {
    package var id: String?
    /// `contentType`, else the part of `mimeType` before the slash (`video`, `audio`, ...).
    package var contentType: String?
    package var representations: [Representation]
}

/// A `Representation`: one encoding, its segments and what they carry.
package struct Representation: Sendable {
    package var id: String
    package var bandwidth: Int
    package var mimeType: String?
    package var codecs: String?
    package var contentType: String?
    package var frameRate: Double?
    /// Where its segments are, resolved through every level above it: the first, then the copies
    /// to read from when it fails (several `BaseURL`s, or the same Representation listed again
    /// per CDN). Never empty.
    package var baseURLs: [String]
    /// The first of `baseURLs`, the one segment addresses are made against.
    package var baseURL: String { baseURLs[0] }
    /// The `availabilityTimeOffset` a copy's `BaseURL`s give it, by copy (absent: 0).
    package var baseURLAvailabilityTimeOffsets: [String: Double] = [:]
    /// Each copy's DVB-DASH priority and service location, by copy (absent: no priority, its
    /// own location): a failed copy excludes the others of either (DVB A168 §10.8.2.4).
    package var copyGroups: [String: CopyGroup] = [:]
    package var addressing: SegmentAddressing?
    /// `InbandEventStream`s, its own and its AdaptationSet's: events its segments carry as `emsg`.
    package var inbandEventStreams: [EventScheme]
    /// `ContentProtection` (CENC, Widevine, PlayReady ...): its samples are encrypted.
    package var protection: [ContentProtection]

    /// Adds `other`'s locations as copies, those it has and past `limit` left out.
    mutating func addCopies(of other: Representation, upTo limit: Int) {
        for url in other.baseURLs where baseURLs.count < limit && !baseURLs.contains(url) {
            baseURLs.append(url)
            baseURLAvailabilityTimeOffsets[url] = other.baseURLAvailabilityTimeOffsets[url]
            copyGroups[url] = other.copyGroups[url]
        }
    }

    /// What a copy shares with others: a failure of one is taken as a failure of them all.
    package struct CopyGroup: Sendable, Equatable {
        /// `dvb:priority`, `nil` when the MPD gives none (never excluded by it).
        package var priority: Int?
        /// `serviceLocation`, else the copy's own URL.
        package var serviceLocation: String

        package init(priority: Int?, serviceLocation: String) {
            self.priority = priority
            self.serviceLocation = serviceLocation
        }
    }

    /// The group of copy `index`.
    package func group(ofCopy index: Int) -> CopyGroup {
        let url = baseURLs[index]
        return copyGroups[url] ?? CopyGroup(priority: nil, serviceLocation: url)
    }

    /// How long before its end a segment of the copy in use may be fetched (§5.3.9.5.3, the
    /// `availabilityTimeOffset`s of its segment information and its BaseURLs added): a
    /// low-latency packager's segment is there, growing, from its first chunk. It may be more
    /// than the segment's length: the segment is then there before it starts (`DASHSegment.
    /// availableFrom`).
    package var availabilityTimeOffset: Double {
        let timing: SegmentTiming? = switch addressing {
        case .template(let template): template.timing
        case .list(let list): list.timing
        case .base(let base): base.timing
        case nil: nil
        }
        return (timing?.availabilityTimeOffset ?? 0) + (baseURLAvailabilityTimeOffsets[baseURL] ?? 0)
    }

    /// The same Representation read from its copy `index`.
    package func copy(_ index: Int) -> Representation {
        var copy = self
        copy.baseURLs = [baseURLs[index]] + baseURLs.enumerated().filter { $0.offset != index }.map(\.element)
        return copy
    }

    /// `uri`, one of its segments' addresses in any of its copies, in its copy `index`: that
    /// copy's BaseURL (or the folder it names) in place of the one it is under.
    package func address(_ uri: String, inCopy index: Int) -> String {
        guard index < baseURLs.count else { return uri }
        if baseURLs.contains(uri) { return baseURLs[index] }
        let folder = { (url: String) in url.lastIndex(of: "/").map { String(url[...$0]) } ?? url }
        // The deepest folder first: one copy's may be another's parent.
        for base in baseURLs.sorted(by: { folder($0).count > folder($1).count }) where uri.hasPrefix(folder(base)) {
            return folder(baseURLs[index]) + uri.dropFirst(folder(base).count)
        }
        return uri
    }

    /// Whether it declares an event stream of ID3 tags.
    package var declaresID3: Bool { inbandEventStreams.contains(where: \.carriesID3) }
    package var isVideo: Bool { contentType == "video" }
}

/// A `ContentProtection` descriptor: a key system (`urn:uuid:...`), or the common encryption
/// scheme in use (`urn:mpeg:dash:mp4protection:2011` with `cenc` or `cbcs`).
package struct ContentProtection: Sendable, Equatable {
    package var scheme: String
    package var value: String?

    /// The encryption scheme the descriptors name (`cenc`, `cbcs`), CENC when none says.
    package static func method(of descriptors: [ContentProtection]) -> String {
        descriptors.first { $0.scheme.lowercased() == "urn:mpeg:dash:mp4protection:2011" }?.value ?? "cenc"
    }
}

/// An event stream's scheme and value.
package struct EventScheme: Sendable, Equatable {
    package var schemeIDURI: String
    package var value: String?

    package var carriesID3: Bool { EventMessage.id3Schemes.contains(schemeIDURI) }
}

/// An MPD `EventStream`: events written in the MPD itself.
package struct EventStream: Sendable {
    package var scheme: EventScheme
    package var timescale: Int
    package var presentationTimeOffset: Int
    package var events: [Event]

    package struct Event: Sendable {
        /// In `timescale` units, from the Period's start plus the stream's `presentationTimeOffset`.
        package var presentationTime: Int
        package var duration: Int?
        package var id: Int?
        package var messageData: [UInt8]
        /// What was wrong with it and how it was read anyway.
        package var note: String?
    }
}

/// How a Representation's segments are named and timed (§5.3.9): one of three ways.
package enum SegmentAddressing: Sendable {
    case template(SegmentTemplate)
    case list(SegmentList)
    case base(SegmentBase)
}

/// Timing shared by the three addressing forms.
package struct SegmentTiming: Sendable, Equatable {
    package var timescale = 1
    package var presentationTimeOffset = 0
    /// `@duration`: every segment's length, when there is no timeline.
    package var duration: Int?
    package var startNumber = 1
    package var endNumber: Int?
    package var timeline: [TimelineEntry]?
    /// `availabilityTimeOffset`, seconds (`INF`: infinity).
    package var availabilityTimeOffset = 0.0
}

/// `SegmentTimeline`'s `S`: `r + 1` segments of `d` from `t` (or where the previous ended).
/// `r` of -1 repeats until the next `S`, or the Period's end.
package struct TimelineEntry: Sendable, Equatable {
    package var time: Int?
    package var number: Int?
    package var duration: Int
    package var repeatCount: Int
}

package struct SegmentTemplate: Sendable {
    package var timing: SegmentTiming
    package var media: URLTemplate?
    package var initialization: URLTemplate?
}

package struct SegmentList: Sendable {
    package var timing: SegmentTiming
    package var initialization: ResourceRange?
    package var segments: [ResourceRange]
}

package struct SegmentBase: Sendable {
    package var timing: SegmentTiming
    package var initialization: ResourceRange?
    /// `indexRange`: where the segment index (`sidx`) is in the resource; `nil` with a
    /// `resource` from a template: the first `sidx` of the resource is its index.
    package var indexRange: ByteRange?
    /// The resource (relative to the BaseURL) a `SegmentTemplate@index` names; `nil`: the BaseURL.
    package var resource: String?

    /// Whether its resource is read a subsegment at a time, by its `sidx`.
    package var isIndexed: Bool { indexRange != nil || resource != nil }

    /// Its resource, for a Representation whose BaseURL is `baseURL`.
    package func location(against baseURL: String) -> String { resource.map { Location.resolve($0, against: baseURL) } ?? baseURL }
}

/// A resource (`nil`: the Representation's BaseURL) and maybe a byte range of it.
package struct ResourceRange: Sendable, Equatable {
    package var uri: String?
    package var range: ByteRange?
}
