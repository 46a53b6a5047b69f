import Foundation
import ID3MeterCore

/// The one walk through an HLS presentation, for a scan and for the meter, VOD or live: the
/// variant chosen, the playlists `rule` reads each followed (`PlaylistFollower`: a VOD, or a
/// playlist read as it stands, never reloads), their segments read in turn through a
/// `SegmentReader` each, `LostSegmentRun` counting what fails. Events come out in the order a
/// player would meet them: `.opened` before the first segment's, then each segment's as it is read.
struct PlaylistWalk<C: Clock>: Sendable where C.Duration == Duration {
    var input: String
    var loader: PlaylistLoader
    var rule: RenditionRule
    /// Which programs of MPEG-TS segments are read.
    var programs = ProgramSelection.all
    /// How many segments back from a live playlist's end to start, as players join.
    var liveStart = 3
    /// The media sequence to start at when the playlist still lists it (a checkpoint's).
    var resumeAt: Int?
    /// `false` reads what the playlists list now and stops (a scan of a live playlist).
    var reloads = true
    /// Probe the first segment's video for its frame rate when the variant declares none (the
    /// frame clock needs it; it costs decoder code and memory, so only the meter asks).
    var probesFrameRate = false
    var clock: C
    /// Told the bytes and segments read (a scan's progress line).
    var progress: ScanProgress.Entry?
    /// This playback of the primary, as its interstitials' requests name it (`_HLS_primary_id`).
    var primaryID = UUID().uuidString.lowercased()

    /// One playlist being read. An object: its follower's `next` is awaited in place, where a
    /// value in the walk's array was copied out and back around each await, the whole lane at
    /// every reload and segment.
    private final class Lane {
        let location: String
        var follower: PlaylistFollower<C>.Iterator
        let reader: SegmentReader
        var lost: LostSegmentRun
        let isFinite: Bool
        let listed: [Segment]
        /// Copies of the playlist on other hosts or pathways to fail over to.
        let hasCopies: Bool
        /// Tags delivered from segments whose read failed, by media sequence, while a copy may read them again.
        var partialTags: [Int: Set<String>] = [:]

        init(location: String, follower: PlaylistFollower<C>.Iterator, reader: SegmentReader, lost: LostSegmentRun, isFinite: Bool,
             listed: [Segment], hasCopies: Bool) {
            (self.location, self.follower, self.reader, self.lost) = (location, follower, reader, lost)
            (self.isFinite, self.listed, self.hasCopies) = (isFinite, listed, hasCopies)
        }
    }

    /// Gap events held for `.opened` (an hour of 4 s segments), past which they go out without it.
    static var maximumGapsBeforeOpening: Int { 1_000 }

    /// What tells a tag read twice (from a rendition and its variant, or two copies of a segment).
    /// `afterEachSegment` is awaited once a segment's events are out (a consumer's room to wait for).
    func run(emit: (MediaEvent) -> Void, afterEachSegment: () async -> Void = {}) async {
        // A live join needs the last few segments (a resume, those from its point on).
        let window: PlaylistParser.SegmentWindow = reloads && resumeAt == nil ? .liveEdge(max(liveStart, 1)) : .all
        let resolved: ResolvedPlaylist
        do { resolved = try await loader.resolve(input, keeping: window) } catch {
            return emit(.failure(InputFailure(source: input, .playlist(error))))
        }
        if let (location, cause) = resolved.firstChoiceFailed {
            emit(.warning(InputFailure(source: input, .switchedPath(from: location, to: resolved.location, onBackup: true,
                                                                    because: .reloadsFailed(cause)))))
        }
        var lanes = [lane(resolved.location, resolved.playlist, pathway: resolved.variant?.pathway, resolved: resolved)]
        var rendition: String? = resolved.audio?.uri
        if rule == .both, let audio = rendition {
            rendition = nil
            if let playlist = await loadRendition(audio, window: window, imports: resolved.variables, emit: emit) {
                lanes.append(lane(audio, playlist, imports: resolved.variables))
            }
        }
        let listed = lanes.allSatisfy(\.isFinite) ? lanes.map(\.listed.count).reduce(0, +) : nil
        var seen = Set<String>()
        let both = lanes.count > 1
        var schedule = InterstitialSchedule()
        // A live join (or a resume) starts after breaks that began before it.
        let joined = resumeAt != nil || reloads && !resolved.playlist.hasEndList
        func deliver(_ event: MediaEvent) {
            if case .tag(let timed) = event {
                if both, !seen.insert(SameTag.key(timed)).inserted { return }
                // Primary content a break replaced is never played: its tags are not delivered.
                if timed.origin.segment?.interstitial == nil, let date = timed.programDateTime, schedule.isReplaced(date) { return }
            }
            emit(event)
        }
        /// Delivers `events`, those of the primary `segment` (from `date`), in the parts of it a
        /// player plays: up to each break whose `START-DATE` is inside it, the break, then on from
        /// where the primary resumes (or from a resumption inside it). Each part ends with a
        /// `.segment` of its own, its media time and first PTS the part's, so that a frame clock
        /// plays the primary after a break from where the break ended. Tags a break replaced are
        /// not delivered (`deliver`).
        func deliverInParts(_ events: [MediaEvent], of segment: Segment, from date: Date) async {
            let end = date.addingTimeInterval(segment.duration)
            let inside = schedule.dueInside(segmentAt: date, duration: segment.duration)
            var rest: [MediaEvent] = []
            var whole: TagOrigin.Segment?
            func sort(_ event: MediaEvent) {
                if case .segment(let read) = event { whole = read } else { rest.append(event) }
            }
            events.forEach(sort)
            // The primary's MPEG-TS state does not run on into a break: what it still holds is this segment's.
            if !inside.isEmpty { lanes[0].reader.finish(emit: sort) }
            func part(from start: Date, to end: Date, isLast: Bool) -> MediaEvent? {
                guard var part = whole else { return nil }
                let offset = start.timeIntervalSince(date)
                part.part = TagOrigin.Part(offset: offset, isLast: isLast)
                part.programDateTime = start
                part.duration = max(end.timeIntervalSince(start), 0)
                // Nothing of it played: no media for a frame clock to place.
                part.startPTS = part.duration == 0 ? nil
                    : whole?.startPTS.map { PTS.asCarried($0 + Int64((offset * Double(PTS.clockRate)).rounded())) }
                return .segment(part)
            }
            var from = schedule.resumption(at: date)
            for interstitial in inside {
                let start = interstitial.startDate
                // What the primary played before the break: its tags dated before it, and the segment's other news.
                func isBefore(_ event: MediaEvent) -> Bool {
                    guard case .tag(let timed) = event, let tagged = timed.programDateTime else { return true }
                    return start.timeIntervalSince(tagged) > InterstitialSchedule.tolerance
                }
                let before = rest.filter(isBefore)
                rest.removeAll(where: isBefore)
                before.forEach(deliver)
                if start > from, let event = part(from: from, to: start, isLast: false) { deliver(event) }
                let seconds = await playBreak(interstitial, listedIn: lanes[0].location, after: segment,
                                              from: schedule.startOffset(of: interstitial), emit: deliver)
                schedule.played(interstitial, for: seconds)
                // An `X-SNAP=IN` resumption inside this segment moves to its nearer boundary.
                _ = schedule.replacesSegment(at: date, duration: segment.duration)
                from = schedule.resumption(at: max(from, start))
            }
            rest.forEach(deliver)
            if let event = part(from: min(from, end), to: end, isLast: true) { deliver(event) }
        }
        // A break before the first segment (CUE=PRE) waits for `.opened`, which that segment makes.
        var breakBeforeOpening: [MediaEvent] = []
        // The primary segment a break follows, whose place its segments take.
        var lastPrimary: Segment?
        var opened = false
        var tried = 0, segmentsRead = 0, bytes: Int64 = 0
        var foundTimedID3 = false
        var saidEncrypted = false
        // Gaps before the first segment read wait for `.opened`, which that segment's streams make.
        var gapsBeforeOpening: [MediaEvent] = []
        var number = 0
        while !lanes.isEmpty {
            if number >= lanes.count { number = 0 }
            // Up to this lane's next segment, read; then the next lane's turn.
            guard let event = await lanes[number].follower.next() else {
                lanes.remove(at: number).reader.finish(emit: deliver)
                continue
            }
            guard case .segment(let segment) = event else {
                if case .interstitials(let list) = event {
                    // The primary's own playlist schedules the breaks (a rendition lists the same).
                    if number == 0 { schedule.learn(list) }
                    continue
                }
                if case .switched = event, let first = lanes[number].lost.firstLost {
                    // The segments that failed on the host left are read from the copy.
                    lanes[number].follower.rewind(to: first)
                    lanes[number].lost = LostSegmentRun(limit: lanes[number].lost.limit)
                }
                playlistEvent(event, emit: emit)
                continue
            }
            defer { number += 1 }
            await afterEachSegment()
            if number == 0 {
                for interstitial in schedule.due(beforeSegmentAt: segment.programDateTime, duration: segment.duration, joined: joined) {
                    // The primary's MPEG-TS state does not run on into the break.
                    lanes[number].reader.finish(emit: deliver)
                    let seconds = await playBreak(interstitial, listedIn: lanes[number].location, after: lastPrimary ?? segment,
                                                  from: schedule.startOffset(of: interstitial)) { event in
                        if opened { deliver(event) } else { breakBeforeOpening.append(event) }
                    }
                    schedule.played(interstitial, for: seconds)
                }
                lastPrimary = segment
            }
            // Replaced by a break as a whole: a player never plays it, so it is not read.
            if schedule.replacesSegment(at: segment.programDateTime, duration: segment.duration) { continue }
            if segment.isGap {
                // Declared missing by the packager: media time without tags, not fetched, not lost.
                lanes[number].reader.pass(gap: segment) { event in
                    guard opened || gapsBeforeOpening.count >= Self.maximumGapsBeforeOpening else { return gapsBeforeOpening.append(event) }
                    // A stream of nothing but gaps is not held for ever: a feeder then plays it without `.opened`.
                    gapsBeforeOpening.forEach(deliver)
                    gapsBeforeOpening = []
                    deliver(event)
                }
                tried += 1
                progress?.update(bytes: bytes, segments: listed.map { (tried, $0) })
                continue
            }
            if !saidEncrypted, let encryption = segment.sampleEncryption {
                saidEncrypted = true
                emit(.warning(InputFailure(source: input, .sampleEncrypted(method: encryption.method, keyFormats: encryption.keyFormats))))
            }
            let probe = probesFrameRate && !opened && !FrameRateChoice.allowedRates.contains(resolved.variant?.frameRate ?? 0)
            // A break inside the primary segment, or a resumption inside it: a player plays it in parts.
            let divided = number == 0 && segment.programDateTime.map { schedule.dividesSegment(at: $0, duration: segment.duration) } == true
            // Held while `.opened` must come first, or the segment may be dropped for the rendition,
            // or while it is to be played in parts.
            let holding = !opened || rendition != nil || divided
            var held: [MediaEvent] = []
            var completed: TagOrigin.Segment?
            // Where a copy may read the segment again, a failed read's tags are remembered, and
            // those another read of it delivered already are not delivered again.
            let remembers = lanes[number].hasCopies
            let delivered = lanes[number].partialTags[segment.mediaSequence] ?? []
            var tagsRead: Set<String> = []
            var cause: (any Error & Sendable)?
            let read = await lanes[number].reader.read(segment, probeStreams: probe) { event in
                if case .tag(let timed) = event {
                    if completed == nil { completed = timed.origin.segment }
                    if remembers {
                        let key = SameTag.key(timed)
                        tagsRead.insert(key)
                        if delivered.contains(key) { return }
                    }
                }
                if case .failure(let failure) = event, case .segmentSkipped = failure.kind { cause = failure.cause }
                if holding { held.append(event) } else { deliver(event) }
            }
            if read == nil, remembers {
                if !tagsRead.isEmpty { lanes[number].partialTags[segment.mediaSequence, default: []].formUnion(tagsRead) }
                // Only a lost run's segments are read again, so older ones need not be remembered.
                let oldest = segment.mediaSequence - lanes[number].lost.limit
                lanes[number].partialTags = lanes[number].partialTags.filter { $0.key > oldest }
            } else if !lanes[number].partialTags.isEmpty {
                lanes[number].partialTags = lanes[number].partialTags.filter { $0.key > segment.mediaSequence }
            }
            tried += 1
            bytes += read?.byteCount ?? 0
            progress?.update(bytes: bytes, segments: listed.map { (tried, $0) })
            if let audio = rendition {
                rendition = nil
                // Tags ride in the audio rendition when the variant's segments have no timed ID3.
                if read?.hasTimedID3 == false, let playlist = await loadRendition(audio, window: window, imports: resolved.variables, emit: emit) {
                    lanes[number].reader.finish { _ in }
                    lanes[number] = lane(audio, playlist, imports: resolved.variables)
                    number -= 1
                    continue
                }
            }
            if !opened {
                opened = true
                let videoRate = read?.streams.first { $0.isVideo }?.frameRate?.framesPerSecond
                emit(.opened(SourceInfo(variantFrameRate: resolved.variant?.frameRate, videoFrameRate: videoRate,
                                        isLive: !resolved.playlist.hasEndList, targetDuration: resolved.playlist.targetDuration)))
            }
            breakBeforeOpening.forEach(deliver)
            breakBeforeOpening = []
            gapsBeforeOpening.forEach(deliver)
            gapsBeforeOpening = []
            if divided, let date = segment.programDateTime {
                await deliverInParts(held, of: segment, from: date)
            } else {
                held.forEach(deliver)
            }
            if let read {
                segmentsRead += 1
                if read.hasTimedID3 { foundTimedID3 = true }
            } else if var completed {
                // A tag the segment before started and this one completed belongs to a segment
                // of its own, adding no media time.
                completed.duration = nil
                emit(.segment(completed))
            }
            let verdict = lanes[number].lost.record(segment.mediaSequence, read: read != nil, finite: lanes[number].isFinite)
            // A redundant copy of the playlist may still have what this host would not give.
            if let lost = verdict.lostAtLimit, let first = lanes[number].lost.firstLost, let cause,
               lanes[number].follower.failOver(from: first, because: .segmentsLost(lost, cause)) {
                lanes[number].lost = LostSegmentRun(limit: lanes[number].lost.limit)
                continue
            }
            switch verdict {
            case .goOn:
                break
            case .stillFollowing(let lost):
                emit(.failure(InputFailure(source: input, .lostInARow(lost))))
            case .giveUp(let lost):
                let untried = lanes[number].listed.count(where: { $0.mediaSequence > segment.mediaSequence })
                emit(.failure(InputFailure(source: input, .gaveUp(playlist: lanes[number].location, lostInARow: lost, untried: untried))))
                lanes.remove(at: number).reader.finish(emit: deliver)
                number -= 1
            }
        }
        gapsBeforeOpening.forEach(deliver)
        breakBeforeOpening.forEach(deliver)
        // The primary ended (a VOD, or a live stream that did): its post-rolls play now.
        if !Task.isCancelled {
            let end = lastPrimary.flatMap { last in last.programDateTime.map { $0.addingTimeInterval(last.duration) } }
            for interstitial in schedule.afterTheEnd(end: end, lastDuration: lastPrimary?.duration ?? 0) {
                _ = await playBreak(interstitial, listedIn: resolved.location, after: lastPrimary, emit: deliver)
            }
        }
        if segmentsRead > 0, !foundTimedID3 {
            emit(.warning(InputFailure(source: input, .noSegmentHasTimedID3)))
        }
    }

    /// A lane reading `playlist`; the variant's own (`resolved`) with its copies and steering.
    private func lane(_ location: String, _ playlist: MediaPlaylist, pathway: String? = nil, resolved: ResolvedPlaylist? = nil,
                      imports: [String: String] = [:]) -> Lane {
        var follower = PlaylistFollower(location: location, first: playlist, loader: loader, liveStart: liveStart, resumeAt: resumeAt,
                                        reloads: reloads, clock: clock)
        follower.imports = resolved?.variables ?? imports
        if let resolved {
            follower.pathway = pathway
            follower.backups = resolved.backups.map { PlaylistFollower.Copy(uri: $0.uri, pathway: $0.pathway) }
            follower.master = resolved.master
            follower.steeringServer = resolved.steeringServer
        }
        return Lane(location: location, follower: follower.makeAsyncIterator(),
                    reader: SegmentReader(source: input, playlist: location, targetDuration: playlist.targetDuration, fetcher: loader.fetcher,
                                          programs: programs),
                    lost: LostSegmentRun(limit: loader.fetcher.limits.maximumConsecutiveLostSegments),
                    isFinite: follower.isFinite, listed: follower.isFinite ? playlist.segments : [], hasCopies: !follower.backups.isEmpty)
    }

    private func loadRendition(_ location: String, window: PlaylistParser.SegmentWindow, imports: [String: String],
                               emit: (MediaEvent) -> Void) async -> MediaPlaylist? {
        do { return try await loader.loadMedia(location, referencedBy: input, keeping: window, imports: imports) } catch {
            emit(.failure(InputFailure(source: input, .audioRendition(error))))
            return nil
        }
    }

    /// Reads `interstitial`'s assets (its `X-ASSET-URI`, or each of its `X-ASSET-LIST`) in order,
    /// as more segments of this walk: each asset's segments through a reader of its own, their
    /// origins naming the break, at most `X-PLAYOUT-LIMIT` of them. Assets are references of
    /// `playlist` (the list's of its list) under the same rule and limits as any. One that cannot
    /// be had is said, and the next is read. Their requests name this playback, and a list's the
    /// seconds into the break a live join came (`InterstitialRequest`). Its segments take the place (media and
    /// discontinuity sequence) of `primary`, the primary segment before the break (the first,
    /// for a pre-roll): a resumed meter replays the break from there, the tags it delivered held
    /// back. A live join `offset` seconds into the break passes its segments before that, as a
    /// player starts a break part way in. Returns the seconds the break played (those passed
    /// included: the primary resumes as far after the break's start); `nil` when nothing of it
    /// could be had (its list, or every asset): players drop such a break from their schedule
    /// and play the primary under it (hls.js, `primaryFallback`), so it replaces nothing. A list
    /// that came empty played 0 s, and its `X-RESUME-OFFSET` still holds (hls.js, "should handle
    /// empty asset-lists with resume offset").
    private func playBreak(_ interstitial: Interstitial, listedIn playlist: String, after primary: Segment?, from offset: Double = 0,
                           emit: (MediaEvent) -> Void) async -> Double? {
        func failed(_ error: SegmentLoadError) { emit(.failure(InputFailure(source: input, .interstitialFailed(id: interstitial.id, error)))) }
        var assets: [(uri: String, referrer: String)] = interstitial.assetURI.map { [($0, playlist)] } ?? []
        var listFailed = false
        if let list = interstitial.assetList {
            let request = InterstitialRequest.url(list, primaryID: primaryID, startOffset: offset)
            do throws(SegmentLoadError) { assets += try await loader.loadAssetList(request, referencedBy: playlist).map { ($0, list) } } catch {
                failed(error)
                listFailed = true
            }
        }
        let limit = interstitial.playoutLimit ?? .infinity
        var played = 0.0
        var hadAnAsset = false
        for (index, (uri, referrer)) in assets.enumerated() where played < limit {
            let asset: ResolvedPlaylist
            do throws(SegmentLoadError) {
                asset = try await loader.resolve(InterstitialRequest.url(uri, primaryID: primaryID), referencedBy: referrer)
            } catch {
                failed(error)
                continue
            }
            hadAnAsset = true
            let reader = SegmentReader(source: input, playlist: asset.location, targetDuration: asset.playlist.targetDuration,
                                       fetcher: loader.fetcher, programs: programs)
            for var segment in asset.playlist.segments where played < limit {
                // Before where a live join came in: passed, not read.
                if played + segment.duration <= offset + 0.001 {
                    played += segment.duration
                    continue
                }
                segment.interstitial = TagOrigin.InterstitialPlace(id: interstitial.id, asset: index)
                if let primary { (segment.mediaSequence, segment.discontinuitySequence) = (primary.mediaSequence, primary.discontinuitySequence) }
                if segment.isGap {
                    reader.pass(gap: segment, emit: emit)
                } else {
                    let start = played
                    _ = await reader.read(segment) { event in
                        // Past the playout limit the break is over: what follows is not played.
                        if case .tag(let timed) = event, let pts = timed.pts, let first = timed.origin.segment?.startPTS,
                           start + PTS.seconds(PTS.distance(from: first, to: pts)) >= limit { return }
                        emit(event)
                    }
                }
                played += segment.duration
            }
            reader.finish(emit: emit)
        }
        if !hadAnAsset, listFailed || !assets.isEmpty { return nil }
        return min(played, limit)
    }

    /// What following a playlist says besides its segments.
    private func playlistEvent(_ event: PlaylistEvent, emit: (MediaEvent) -> Void) {
        switch event {
        case .segment, .interstitials: break
        case .resumed(let resumption): emit(.resumed(resumption))
        case .reloadFailed(let error): emit(.failure(InputFailure(source: input, .reloadFailed(error))))
        case .reloadRecovered(let failures): emit(.warning(InputFailure(source: input, .reloadRecovered(afterFailures: failures))))
        case .gap(let sequences): emit(.failure(InputFailure(source: input, .leftLiveWindow(sequences))))
        case .sequenceWentBack(let from, let to): emit(.warning(InputFailure(source: input, .mediaSequenceWentBack(from: from, to: to))))
        case .renumbered(let from, let to): emit(.warning(InputFailure(source: input, .renumbered(from: from, to: to))))
        case .discontinuityWentBack(let from, let to):
            emit(.warning(InputFailure(source: input, .discontinuitySequenceWentBack(from: from, to: to))))
        case .steeringFailed(let error): emit(.warning(InputFailure(source: input, .steeringFailed(error))))
        case .switched(let from, let to, let onBackup, let reason):
            emit(.warning(InputFailure(source: input, .switchedPath(from: from, to: to, onBackup: onBackup, because: reason))))
        }
    }
}
