import Foundation
import ID3MeterCore

/// The one walk through a DASH presentation, beside `PlaylistWalk` and giving the same events:
/// for a scan and for the meter, static or dynamic. Each Period's Representation is chosen
/// (`MPDChoice`), its segments made from the MPD (`SegmentEnumeration`, or the `sidx` of a
/// `SegmentBase`) and read through a `SegmentReader` as HLS segments are, the MPD's own
/// `EventStream` events handed out with the segment they fall in. A dynamic MPD is refreshed
/// as its `minimumUpdatePeriod` says and its segments are read as the server's clock
/// (`UTCTiming`) makes them available, each once, new Periods as they appear.
struct DASHWalk<C: Clock>: Sendable where C.Duration == Duration {
    var input: String
    var loader: MPDLoader
    var variant: VariantChoice
    /// Which programs of MPEG-TS segments are read.
    var programs = ProgramSelection.all
    /// How many segments back from a live edge to start, as players join.
    var liveStart = 3
    /// The segment number to start at while the time-shift buffer still holds it (a checkpoint's).
    var resumeAt: Int?
    /// `false` reads what a dynamic MPD lists now and stops (a scan).
    var reloads = true
    var clock: C
    /// This machine's wall clock, which the server's `UTCTiming` corrects.
    var wallClock: @Sendable () -> Date = { Date() }
    var progress: ScanProgress.Entry?

    /// What the walk has done so far, across Periods and refreshes.
    private struct Progress {
        var opened = false
        var reader: SegmentReader
        /// Per Period (by `Period.key`): the chosen Representation's id (its segments are taken
        /// from each refresh of the MPD), and where reading got to.
        var chosen: [String: String] = [:]
        /// Periods whose chosen Representation showed timed ID3 (or was the only candidate).
        var confirmed: Set<String> = []
        /// Per Period, the copy of its Representation read from (an index in its `baseURLs`).
        var copyInUse: [String: Int] = [:]
        /// Service locations and DVB priorities a failed copy excluded: never read from again
        /// while another copy is not excluded (dash.js keeps them excluded; Media3 for 5 minutes).
        var excludedLocations: Set<String> = []
        var excludedPriorities: Set<Int> = []
        var lastRead: [String: DASHSegment] = [:]
        var finished: Set<String> = []
        /// `EventStream` events handed out, by Period, then scheme, value and id (§5.10.2: the
        /// same one again is not a new event).
        var eventsSeen: [String: Set<String>] = [:]
        var lost = LostSegmentRun(limit: 0)
        var tried = 0, segmentsRead = 0, bytes: Int64 = 0
        var foundTimedID3 = false
        var saidProtected = false
        var saidRemote: Set<String> = []
        var saidNoSuchVariant = false
        /// A static MPD's checkpoint segment: the Period whose segments start from it.
        var resumeIn: String?

        /// Of the finished Periods a refresh no longer lists, only that they were finished is
        /// kept (an edge that lists one again does not have it read twice): a live walk of weeks
        /// through a Period per ad break holds what the MPD lists, and a key a Period.
        mutating func forget(periodsOutside mpd: MPD) {
            let listed = Set(mpd.periods.map(\.key))
            func kept(_ key: String) -> Bool { listed.contains(key) || !finished.contains(key) }
            chosen = chosen.filter { kept($0.key) }
            copyInUse = copyInUse.filter { kept($0.key) }
            lastRead = lastRead.filter { kept($0.key) }
            eventsSeen = eventsSeen.filter { kept($0.key) }
            confirmed = confirmed.filter(kept)
        }
    }

    func run(emit: (MediaEvent) -> Void, afterEachSegment: () async -> Void = {}) async {
        var mpd: MPD
        do { mpd = try await loader.load(input) } catch {
            return emit(.failure(InputFailure(source: input, .playlist(error))))
        }
        var state = Progress(reader: SegmentReader(source: input, playlist: input, targetDuration: mpd.maxSegmentDuration,
                                                  fetcher: loader.fetcher, programs: programs),
                             lost: LostSegmentRun(limit: loader.fetcher.limits.maximumConsecutiveLostSegments))
        if !mpd.isDynamic {
            if let resumeAt, let period = firstPeriod(of: mpd, numbering: resumeAt) {
                // A restart starts at its checkpoint's segment (ResumingEngine holds back what it delivered).
                state.resumeIn = period.key
                mpd.periods.prefix { $0.key != period.key }.forEach { state.finished.insert($0.key) }
                emit(.resumed(.atSegment(resumeAt)))
            }
            for period in mpd.periods where !state.finished.contains(period.key) {
                guard await read(period, of: mpd, availableUntil: nil, state: &state, emit: emit, afterEachSegment: afterEachSegment) else { break }
            }
        } else {
            await follow(mpd, state: &state, emit: emit, afterEachSegment: afterEachSegment)
        }
        state.reader.finish(emit: emit)
        if mpd.isDynamic, state.tried == 0, !state.foundTimedID3 {
            emit(.warning(InputFailure(source: input, .noSegmentAvailable)))
        }
        if state.segmentsRead > 0, !state.foundTimedID3 {
            emit(.warning(InputFailure(source: input, .noSegmentHasTimedID3)))
        }
    }

    /// A dynamic MPD: its segments as the server's clock makes them available, the MPD fetched
    /// again every `minimumUpdatePeriod`, until it turns static or this task is cancelled.
    private func follow(_ first: MPD, state: inout Progress, emit: (MediaEvent) -> Void, afterEachSegment: () async -> Void) async {
        var mpd = first
        var offset = 0.0
        switch await loader.serverClockOffset(mpd.utcTimings, mpd: mpd.answeredFrom ?? input, now: wallClock) {
        case .success(let seconds): offset = seconds
        case .failure(let problem): emit(.warning(InputFailure(source: input, .serverClock(problem.reason))))
        }
        var fetched = clock.now
        // An MPD vouches for segments up to its fetch time plus minimumUpdatePeriod (on the
        // server's clock): past that, a later one may have ended the Period.
        var fetchedAt = wallClock().addingTimeInterval(offset)
        var failedReloads = 0
        var lastRefresh: MPDLoader.Refresh?
        while !Task.isCancelled {
            var now = wallClock().addingTimeInterval(offset)
            if let period = mpd.minimumUpdatePeriod { now = min(now, fetchedAt.addingTimeInterval(max(period, 0.5))) }
            let elapsed = mpd.availabilityStartTime.map { now.timeIntervalSince($0) } ?? .infinity
            var wait = mpd.minimumUpdatePeriod ?? 1
            for period in mpd.periods where !state.finished.contains(period.key) && period.start <= elapsed {
                guard await read(period, of: mpd, availableUntil: elapsed - period.start, state: &state, emit: emit,
                                 afterEachSegment: afterEachSegment) else { return }
                if let next = nextAvailability(in: period, of: mpd, state: state, now: elapsed - period.start) {
                    wait = min(wait, max(0.05, next - (wallClock().addingTimeInterval(offset).timeIntervalSince(mpd.availabilityStartTime ?? now))))
                }
            }
            guard reloads else { return }
            // Static now, or a dynamic MPD that will not change (no minimumUpdatePeriod): read to its end, then done.
            if mpd.minimumUpdatePeriod == nil, mpd.periods.allSatisfy({ state.finished.contains($0.key) }) { return }
            if let period = mpd.minimumUpdatePeriod {
                // A refresh already due is made after the shortest wait, not a whole period later:
                // a wake a hair before the due time found it not yet due, and the next turn slept
                // a full period (a low-latency segment asked after its end, seen on a loaded machine).
                let untilDue = clock.now.duration(to: fetched.advanced(by: .seconds(max(period, 0.5))))
                wait = min(wait, max(untilDue.seconds, 0))
            }
            guard (try? await clock.sleep(for: .seconds(max(wait, 0.05)))) != nil else { return }
            guard let period = mpd.minimumUpdatePeriod, clock.now >= fetched.advanced(by: .seconds(max(period, 0.5))) else { continue }
            do {
                // Where it was answered from after a redirect, as dash.js (its manifest's url)
                // and shaka-player refresh it; after a failed refresh, where it was first asked
                // (shaka tries that one second).
                let location = mpd.locations.first ?? (failedReloads == 0 ? mpd.answeredFrom : nil) ?? input
                let refreshed = try await loader.load(location, referencedBy: location == input ? nil : input, unlessSameAs: &lastRefresh)
                fetched = clock.now
                fetchedAt = wallClock().addingTimeInterval(offset)
                if failedReloads > 0 { emit(.warning(InputFailure(source: input, .reloadRecovered(afterFailures: failedReloads)))) }
                failedReloads = 0
                if !refreshed.isDynamic {
                    // Turned static: what it lists now is all there will be.
                    for period in refreshed.periods where !state.finished.contains(period.key) {
                        guard await read(period, of: refreshed, availableUntil: nil, state: &state, emit: emit,
                                         afterEachSegment: afterEachSegment) else { return }
                    }
                    return
                }
                mpd = refreshed
                state.forget(periodsOutside: mpd)
            } catch {
                failedReloads += 1
                emit(.failure(InputFailure(source: input, .reloadFailed(error))))
                let backoff = Self.reloadRetry(after: failedReloads, updatePeriod: mpd.minimumUpdatePeriod, error)
                guard (try? await clock.sleep(for: backoff)) != nil else { return }
            }
        }
    }

    /// The first Period of a static MPD with a segment numbered `number`, by the Representation
    /// it would read; `nil` when none has one (every Period is then read from its start).
    private func firstPeriod(of mpd: MPD, numbering number: Int) -> Period? {
        mpd.periods.first { period in
            guard period.remoteReference == nil, let representation = MPDChoice(variant: variant).candidates(in: period).first else { return false }
            return SegmentEnumeration(representation: representation, periodDuration: period.duration).prefix(Self.batch)
                .contains { $0.number == number }
        }
    }

    /// When the next segment of `period` after the last read (the first, when none was read yet:
    /// a Period that has just begun) becomes available, in seconds from the availability start;
    /// `nil` when the Period is done or has no such segment. `until` is now, from its start.
    private func nextAvailability(in period: Period, of mpd: MPD, state: Progress, now until: Double) -> Double? {
        guard let id = state.chosen[period.key],
              let representation = period.adaptationSets.flatMap(\.representations).first(where: { $0.id == id }) else { return nil }
        let last = state.lastRead[period.key]
        let early = representation.availabilityTimeOffset
        var next = SegmentEnumeration(representation: representation, periodDuration: period.duration, from: last?.end ?? max(0, until))
            .makeIterator()
        while let segment = next.next() {
            if let last, segment.start < last.end - 1e-9 { continue }
            if last == nil, segment.availableFrom(early: early) <= until { continue }
            return period.start + segment.availableFrom(early: early)
        }
        return nil
    }

    /// Reads `period`'s segments after those already read, up to those available by
    /// `availableUntil` (seconds from its start; `nil`: all). `false` when the walk must stop.
    private func read(_ period: Period, of mpd: MPD, availableUntil: Double?, state: inout Progress,
                      emit: (MediaEvent) -> Void, afterEachSegment: () async -> Void) async -> Bool {
        if let remote = period.remoteReference {
            // A reference not resolved plays the Period as written, its default content, as
            // dash.js does (XlinkController: the element kept, its xlink attributes dropped).
            let asWritten = !period.adaptationSets.isEmpty || !period.eventStreams.isEmpty
            if state.saidRemote.insert(period.key).inserted {
                emit(.warning(InputFailure(source: input, .remotePeriod(remote, failure: mpd.remoteFailures[remote], asWritten: asWritten))))
            }
            guard asWritten else {
                state.finished.insert(period.key)
                return true
            }
        }
        let current = state.chosen[period.key].flatMap { id in period.adaptationSets.flatMap(\.representations).first { $0.id == id } }
        var candidates = current.map { [$0] } ?? MPDChoice(variant: variant).candidates(in: period)
        // Tags in the MPD itself: the first choice is read, whatever its segments carry.
        if period.eventStreams.contains(where: \.scheme.carriesID3) { candidates = Array(candidates.prefix(1)) }
        guard !candidates.isEmpty else {
            let count = period.adaptationSets.flatMap(\.representations).count
            if case .index = variant, count > 0, !state.saidNoSuchVariant {
                state.saidNoSuchVariant = true
                emit(.failure(InputFailure(source: input, .playlist(SegmentLoadError.noSuchRepresentation(variant, count: count)))))
            }
            // A Period of events alone still hands them out.
            handOutEvents(of: period, representation: nil, before: nil, origin: nil, state: &state, emit: emit)
            state.finished.insert(period.key)
            return true
        }
        while let representation = candidates.first {
            state.chosen[period.key] = representation.id
            if !state.saidProtected, !representation.protection.isEmpty {
                // Samples are encrypted, emsg boxes are not: read without a key, no licence asked for.
                state.saidProtected = true
                emit(.warning(InputFailure(source: input, .sampleEncrypted(method: ContentProtection.method(of: representation.protection),
                                                                           keyFormats: representation.protection.map(\.scheme)))))
            }
            var switchTo = false
            var segments = await self.segments(of: representation, in: period, mpd: mpd, availableUntil: availableUntil,
                                               after: state.lastRead[period.key], state: &state, emit: emit)
            var taken = 0
            while taken < segments.count || (availableUntil == nil && segments.count == Self.batch) {
                if taken == segments.count {
                    // A static Period's next batch.
                    segments = await self.segments(of: representation, in: period, mpd: mpd, availableUntil: nil,
                                                   after: state.lastRead[period.key], state: &state, emit: emit)
                    taken = 0
                    if segments.isEmpty { break }
                }
                let segment = segments[taken]
                taken += 1
                if Task.isCancelled { return false }
                await afterEachSegment()
                // Held until the source is opened and the Period's choice confirmed, and dropped if
                // the Representation gives way to another.
                var held: [MediaEvent] = []
                let settled = state.opened && state.confirmed.contains(period.key)
                let hold = { (event: MediaEvent) in if settled { emit(event) } else { held.append(event) } }
                let copy = state.copyInUse[period.key] ?? Self.firstAllowed(of: representation, state.excludedLocations, state.excludedPriorities) ?? 0
                handOutEvents(of: period, representation: representation, before: segment,
                              origin: Self.segment(segment, of: representation, copy: copy, in: period, mpd: mpd), state: &state, emit: hold)
                let (segmentRead, readFrom) = await read(segment, of: representation, from: copy, in: period, mpd: mpd, state: &state, emit: hold)
                state.copyInUse[period.key] = readFrom
                state.tried += 1
                state.bytes += segmentRead?.byteCount ?? 0
                progress?.update(bytes: state.bytes)
                // Each Period's first Representation read without timed ID3 (or not read at all)
                // gives way to the next that may carry it: Periods choose on their own.
                if !state.confirmed.contains(period.key), segmentRead?.hasTimedID3 != true, candidates.count > 1 {
                    candidates.removeFirst()
                    state.chosen[period.key] = nil
                    state.reader.finish { _ in }
                    switchTo = true
                    break
                }
                state.confirmed.insert(period.key)
                if !state.opened {
                    state.opened = true
                    emit(.opened(SourceInfo(variantFrameRate: MPDChoice.frameRate(in: period), isLive: mpd.isDynamic,
                                            targetDuration: mpd.maxSegmentDuration ?? segment.seconds)))
                }
                held.forEach(emit)
                state.lastRead[period.key] = segment
                if let segmentRead {
                    state.segmentsRead += 1
                    if segmentRead.hasTimedID3 { state.foundTimedID3 = true }
                }
                // A scan reads a live MPD as it stands: like a VOD, it gives up on a run of losses.
                switch state.lost.record(segment.number, read: segmentRead != nil, finite: !mpd.isDynamic || !reloads) {
                case .goOn: break
                case .stillFollowing(let lost): emit(.failure(InputFailure(source: input, .lostInARow(lost))))
                case .giveUp(let lost):
                    emit(.failure(InputFailure(source: input, .gaveUp(playlist: input, lostInARow: lost, untried: 0))))
                    return false
                }
            }
            if switchTo { continue }
            break
        }
        let periodDone = availableUntil == nil || period.duration.map { availableUntil! >= $0 } == true
        if periodDone {
            // Events after the last segment, and in a Period with none read.
            handOutEvents(of: period, representation: candidates.first, before: nil, origin: nil, state: &state, emit: emit)
            state.finished.insert(period.key)
        }
        return true
    }

    /// Reads `segment` from the copy `copy` of `representation`, and when that fails from the
    /// next copy not excluded (as a player fails over between CDNs), each switch said. While
    /// another copy may be tried, a copy is asked once, not retried: Media3 moves on at once
    /// from a 404 or 503, and a live segment waits for nobody. The tags a failed attempt read
    /// before it failed are delivered (as HLS delivers a lost segment's), and not again from the
    /// next copy: the extractor knows an `emsg` event whichever copy carries it, and an MPEG-TS
    /// tag, which has no identity of its own, is told by its PTS and frames (`SameTag`) from
    /// those the attempts before delivered. The read (or `nil` when every copy failed, or the
    /// walk was cancelled) and the copy it came from.
    private func read(_ segment: DASHSegment, of representation: Representation, from copy: Int, in period: Period, mpd: MPD,
                      state: inout Progress, emit: (MediaEvent) -> Void) async -> (SegmentReader.SegmentRead?, Int) {
        var copy = copy
        var delivered: Set<String> = []
        for attempt in 1...representation.baseURLs.count {
            var events: [MediaEvent] = []
            let last = attempt == representation.baseURLs.count
            let read = await state.reader.read(Self.segment(segment, of: representation, copy: copy, in: period, mpd: mpd), retrying: last) {
                events.append($0)
            }
            let earlier = delivered
            events.removeAll { event in
                guard case .tag(let timed) = event else { return false }
                let key = SameTag.key(timed)
                delivered.insert(key)
                return earlier.contains(key)
            }
            // A read stopped by the walk's cancellation is no copy's failure: no switch to say.
            if read != nil || last || Task.isCancelled {
                events.forEach(emit)
                return (read, copy)
            }
            let failure = events.compactMap { if case .failure(let failure) = $0 { failure } else { nil } }.last
            events.filter { if case .failure = $0 { false } else { true } }.forEach(emit)
            copy = switchCopy(of: representation, from: copy, because: failure, state: &state, emit: emit)
        }
        return (nil, copy)
    }

    /// The copy of `representation` to read after `copy` failed, the switch said as HLS says
    /// one. The failed copy's service location and DVB priority level are excluded (DVB A168
    /// §10.8.2.4, as dash.js's DVBSelector and Media3's BaseUrlExclusionList exclude them), and
    /// the first copy of neither is next, in the MPD's order of preference; when that would
    /// leave none, nothing is excluded and the next copy in order is (Media3 never excludes the
    /// last priority level).
    private func switchCopy(of representation: Representation, from copy: Int, because failure: InputFailure?,
                            state: inout Progress, emit: (MediaEvent) -> Void) -> Int {
        let group = representation.group(ofCopy: copy)
        var locations = state.excludedLocations, priorities = state.excludedPriorities
        // A service location is a copy's URL when the MPD names none, and a live MPD's URLs may
        // change with every refresh (tokens): weeks of failures keep at most a few dozen.
        if locations.count >= Self.maximumExclusions { locations.removeAll() }
        if priorities.count >= Self.maximumExclusions { priorities.removeAll() }
        locations.insert(group.serviceLocation)
        if let priority = group.priority { priorities.insert(priority) }
        let allowed = Self.firstAllowed(of: representation, locations, priorities)
        let next: Int
        if let allowed {
            (state.excludedLocations, state.excludedPriorities) = (locations, priorities)
            next = allowed
        } else {
            next = (copy + 1) % representation.baseURLs.count
        }
        // A read that ended without a failure was stopped.
        let cause: any Error & Sendable = failure?.cause ?? failure ?? CancellationError()
        emit(.warning(InputFailure(source: input, .switchedPath(from: representation.baseURLs[copy], to: representation.baseURLs[next],
                                                                 onBackup: next != 0, because: .segmentsLost(1, cause)))))
        return next
    }

    static var maximumExclusions: Int { 64 }

    /// The first copy of `representation`, in the MPD's order of preference, whose service
    /// location and priority level are not excluded.
    private static func firstAllowed(of representation: Representation, _ locations: Set<String>, _ priorities: Set<Int>) -> Int? {
        representation.baseURLs.indices.first { index in
            let group = representation.group(ofCopy: index)
            return !locations.contains(group.serviceLocation) && !(group.priority.map(priorities.contains) ?? false)
        }
    }

    /// The segments of `representation` to read now: after `last` (all of them when `nil`:
    /// a static Period from its start, a live one joined near its edge), available by `until`.
    private func segments(of representation: Representation, in period: Period, mpd: MPD, availableUntil until: Double?,
                          after last: DASHSegment?, state: inout Progress, emit: (MediaEvent) -> Void) async -> [DASHSegment] {
        if case .base(let base) = representation.addressing, base.isIndexed {
            // The index is read from the copy in use, or the next that answers.
            var copy = state.copyInUse[period.key] ?? Self.firstAllowed(of: representation, state.excludedLocations, state.excludedPriorities) ?? 0
            for attempt in 1...representation.baseURLs.count {
                var events: [MediaEvent] = []
                if let segments = await indexedSegments(of: representation.copy(copy), base: base, period: period,
                                                        after: last, emit: { events.append($0) }) {
                    events.forEach(emit)
                    state.copyInUse[period.key] = copy
                    return segments.filter { until == nil || $0.availableFrom(early: representation.availabilityTimeOffset) <= until! }
                }
                if attempt == representation.baseURLs.count {
                    events.forEach(emit)
                    break
                }
                copy = switchCopy(of: representation, from: copy, because: events.compactMap { if case .failure(let failure) = $0 { failure } else { nil } }.last,
                                  state: &state, emit: emit)
            }
            return []
        }
        guard let until else {
            // Static: the next batch after the last read (the caller asks again until none is left),
            // from a restart's segment in its Period.
            let all = SegmentEnumeration(representation: representation, periodDuration: period.duration, from: last?.end ?? 0)
                .lazy.filter { last == nil || $0.start >= last!.end - 1e-9 }
            if last == nil, state.resumeIn == period.key, let resumeAt {
                state.resumeIn = nil
                return Array(all.drop { $0.number != resumeAt }.prefix(Self.batch))
            }
            return Array(all.prefix(Self.batch))
        }
        // Dynamic: those whose end the server's clock has passed, within the time-shift buffer.
        // Only the walk's first Period is joined near its edge (a scan reads the whole buffer); a
        // later one is read from its start.
        let first = last == nil && !state.opened && state.lastRead.isEmpty
        let joining = reloads && first
        var depth = mpd.timeShiftBufferDepth ?? .infinity
        // The first look back is bounded, however deep the buffer (or old its clock): a join's (or a
        // checkpoint's segment's) to ten minutes, a scan's to six hours.
        if first { depth = min(depth, max(joining ? Self.joinLookBack : Self.scanLookBack, 4 * (mpd.maxSegmentDuration ?? 0))) }
        let windowStart = max(0, until - depth)
        var available: [DASHSegment] = []
        var dropped: ClosedRange<Int>?
        let from = last.map { max($0.end, windowStart) } ?? windowStart
        // A join keeps the few segments it starts from (`liveStart`; under a suggestedPresentationDelay, told by time below).
        let keep = joining && mpd.suggestedPresentationDelay == nil ? max(liveStart, 1) : Self.batch
        let early = representation.availabilityTimeOffset
        let ahead = until + DASHSegment.lookAhead(early: early)
        for segment in SegmentEnumeration(representation: representation, periodDuration: period.duration, from: from, until: ahead) {
            guard segment.availableFrom(early: early) <= until + 1e-9 else { break }
            if let last, segment.start < last.end - 1e-9 { continue }
            available.append(segment)
            // Only the newest are kept (a join's few, and a checkpoint's), dropped in batches so that it costs no quadratic time.
            if available.count >= 2 * keep + 64 { trim(&available, to: keep) }
        }
        trim(&available, to: keep)
        func trim(_ segments: inout [DASHSegment], to count: Int) {
            guard segments.count > count, !segments.contains(where: { $0.number == resumeAt }) else { return }
            let gone = segments.prefix(segments.count - count)
            if !joining { dropped = (dropped?.lowerBound ?? gone.first!.number)...gone.last!.number }
            segments.removeFirst(gone.count)
        }
        if let dropped { emit(.warning(InputFailure(source: input, .bufferBeyondReach(dropped, read: Self.batch)))) }
        var skipped: ClosedRange<Int>?
        if let last, let first = available.first, first.number > last.number + 1 {
            skipped = (last.number + 1)...(first.number - 1)
        }
        if let skipped { emit(.failure(InputFailure(source: input, .leftLiveWindow(skipped)))) }
        guard joining else { return available }
        if let resumeAt, let place = available.firstIndex(where: { $0.number == resumeAt }) {
            emit(.resumed(.atSegment(resumeAt)))
            return Array(available[place...])
        }
        // Joined as far back as the MPD's suggestedPresentationDelay says players play, else `liveStart` segments.
        let delayed = mpd.suggestedPresentationDelay.map { delay in Array(available.drop { $0.end <= until - delay }) } ?? []
        let join = delayed.isEmpty ? Array(available.suffix(max(liveStart, 1))) : delayed
        if let resumeAt, let edge = join.first {
            if resumeAt > edge.number + available.count { emit(.resumed(.sequenceWentBack(to: edge.number))) } else {
                let lost = resumeAt + 1 < edge.number ? (resumeAt + 1)...(edge.number - 1) : nil
                emit(.resumed(.atLiveEdge(lost: lost, seconds: Double(lost?.count ?? 0) * edge.seconds)))
            }
        }
        return join
    }

    /// The longest wait before asking again for a live MPD that could not be read.
    static var unreadableRetry: Duration { .seconds(30) }

    /// How long to wait after `failures` failed refreshes in a row: from the update period,
    /// doubling to four times it; for an MPD that came back unreadable, to 30 s: a broken
    /// manifest is no passing fault.
    static func reloadRetry(after failures: Int, updatePeriod: Double?, _ error: SegmentLoadError) -> Duration {
        let interval = Duration.seconds(max(updatePeriod ?? 1, 0.5))
        let unreadable = if case .unreadableMPD = error { true } else { false }
        let longest = unreadable ? max(interval * 4, unreadableRetry) : interval * 4
        return Backoff(first: interval, maximum: longest).delay(after: failures)
    }

    /// How far back a live join looks for the segments to start at (10 minutes), and a scan of a
    /// live MPD for segments to read (6 hours): a buffer may be deeper, or the clock far older.
    static var joinLookBack: Double { 600 }
    static var scanLookBack: Double { 6 * 3_600 }
    /// The most segments taken at once: a static Period is read a batch at a time, a live buffer's newest.
    static var batch: Int { 10_000 }

    /// A `SegmentBase` resource's subsegments, from its `sidx`; the whole resource as one
    /// segment when the index cannot be had (the failure said).
    /// `nil` when the index could not be fetched (a failure emitted).
    private func indexedSegments(of representation: Representation, base: SegmentBase, period: Period,
                                 after last: DASHSegment?, emit: (MediaEvent) -> Void) async -> [DASHSegment]? {
        let whole = Array(SegmentEnumeration(representation: representation, periodDuration: period.duration))
        let resource = base.location(against: representation.baseURL)
        do throws(SegmentLoadError) {
            guard let index = try await loader.segmentIndex(of: resource, at: base.indexRange, from: input) else {
                let place = base.indexRange.map { "sidx at \($0.offset)-\($0.end - 1)" } ?? "no sidx in its first \(SegmentIndex.searchLength >> 10) KiB"
                emit(.warning(InputFailure(source: input, segment: resource, .segmentNote(
                    "its segment index (\(place)) is not readable: read as one segment"))))
                return last == nil ? whole : []
            }
            let offset = base.timing.presentationTimeOffset
            return index.references.enumerated().compactMap { place, reference in
                let start = Double(reference.time - offset) / Double(index.timescale)
                guard last.map({ start >= $0.end - 1e-9 }) ?? true else { return nil }
                return DASHSegment(number: base.timing.startNumber + place, time: reference.time, duration: reference.duration,
                                   timescale: index.timescale, uri: resource, range: reference.range, start: start)
            }
        } catch {
            emit(.failure(InputFailure(source: input, segment: resource, .segmentSkipped(mediaSequence: base.timing.startNumber, error))))
            return nil
        }
    }

    /// The MPD's own events of `period` (ID3 schemes) that start before `segment` ends (all
    /// that are left when `nil`), each once, timed on the Representation's media timeline.
    private func handOutEvents(of period: Period, representation: Representation?, before segment: DASHSegment?, origin: Segment?,
                               state: inout Progress, emit: (MediaEvent) -> Void) {
        let timing = representation.flatMap(MPDChoice.timing)
        let mediaOffset = timing.map { Double($0.presentationTimeOffset) / Double($0.timescale) } ?? 0
        let tagOrigin = TagOrigin(source: input, segment: origin.map(SegmentReader.origin(of:)))
        for stream in period.eventStreams where stream.scheme.carriesID3 {
            for event in stream.events {
                let start = Double(event.presentationTime - stream.presentationTimeOffset) / Double(stream.timescale)
                if let segment, start >= segment.end { continue }
                let key = "\(stream.scheme.schemeIDURI) \(stream.scheme.value ?? "") \(event.id.map(String.init) ?? "@\(start)")"
                guard state.eventsSeen[period.key, default: []].insert(key).inserted else { continue }
                // Wrapped as 33-bit PTS before it is an integer: an MPD's times reach 2^53 units, past Int64 in ticks.
                let ticks = ((start + mediaOffset) * Double(PTS.clockRate)).rounded(.down)
                let wrap = Double(PTS.wrap)
                let pts = PTS.asCarried(Int64(ticks - (ticks / wrap).rounded(.down) * wrap))
                var carriage = Carriage(stream: "MPD EventStream \(stream.scheme.schemeIDURI)")
                carriage.note = "MPD EventStream \(stream.scheme.schemeIDURI)"
                let contents = ID3PacketParser.parse(event.messageData)
                for var tag in contents.tags {
                    state.foundTimedID3 = true
                    if let note = event.note { tag.notes.append(note) }
                    emit(.tag(TimedTag(tag: tag, pts: pts, origin: tagOrigin, carriage: carriage)))
                }
                if let error = contents.error { emit(.malformed(error, pts: pts, origin: tagOrigin)) }
            }
        }
    }

    /// `segment` as the segment reader reads segments: its `$Number$` its media sequence, its
    /// Period's start (ms) its discontinuity sequence, its wall-clock time from a dynamic MPD.
    /// `copy`: which of the Representation's copies it is read from.
    static func segment(_ segment: DASHSegment, of representation: Representation, copy: Int = 0, in period: Period, mpd: MPD) -> Segment {
        let uri = representation.address(segment.uri, inCopy: copy)
        let representation = representation.copy(copy)
        var segment = segment
        segment.uri = uri
        let initialization = SegmentEnumeration(representation: representation, periodDuration: period.duration).initialization
        var result = Segment(uri: segment.uri, duration: segment.seconds, mediaSequence: segment.number,
                             discontinuitySequence: Int(min(period.start * 1_000, Double(Int32.max))),
                             programDateTime: mpd.availabilityStartTime.map { $0.addingTimeInterval(period.start + segment.start) })
        result.mapURI = initialization?.uri
        result.mapByteRange = initialization?.range
        // A SegmentBase without an Initialization: the movie header is what comes before the index.
        if initialization == nil, case .base(let base) = representation.addressing, let index = base.indexRange, segment.range != nil {
            result.mapURI = segment.uri
            result.mapByteRange = ByteRange(offset: 0, length: index.offset)
        }
        result.byteRange = segment.range
        result.dash = TagOrigin.DASHPlace(period: period.id ?? String(period.index), representation: representation.id, time: segment.time)
        return result
    }
}
