import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// What a channel remembers for hours is kept as fingerprints (`Fingerprint`), not strings: each
/// such memory must answer as one of the strings themselves answers, evictions included.
@Suite("Memories kept as fingerprints")
struct FingerprintTests {
    /// The filter keeps fingerprints, not payloads: it must still admit exactly what a filter of
    /// the payloads themselves admits. The model below keeps the strings, the last `capacity`
    /// (payload, PTS) pairs and the previous payload, as the rule says. Payloads come from a small
    /// pool (many repeats, also at other PTS and without one) and a large one, through evictions.
    @Test func theDuplicateFilterAdmitsWhatAFilterOfThePayloadsWould() {
        struct Model {
            struct Key: Hashable { var pts: Int64?; var payload: String }
            let capacity: Int
            var keys: [Key] = []
            var previous: String?
            mutating func admit(_ payload: String, _ pts: Int64?) -> Bool {
                let key = Key(pts: pts, payload: payload)
                guard payload != previous, !keys.contains(key) else { return false }
                previous = payload
                keys.append(key)
                if keys.count > capacity { keys.removeFirst() }
                return true
            }
        }
        var random = SeededRandom(seed: 56)
        var admitted = 0, turnedAway = 0
        for (pool, ptsPool) in [(20, 3), (5_000, 50)] {
            var filter = DuplicateFilter(capacity: 64), model = Model(capacity: 64)
            for _ in 0..<20_000 {
                let payload = NielsenTagTests.sample + String(random.next() % UInt64(pool))
                let draw = random.next() % UInt64(ptsPool + 1)
                let pts = draw == 0 ? nil : Int64(draw) * 90_000
                let admits = filter.admit(payload: payload, pts: pts)
                #expect(admits == model.admit(payload, pts), "\(payload.suffix(4)) at \(pts.map(String.init) ?? "no PTS")")
                if admits { admitted += 1 } else { turnedAway += 1 }
            }
        }
        // Both ways were taken many times, past many evictions.
        #expect(admitted > 1_000 && turnedAway > 1_000, "\(admitted) admitted, \(turnedAway) turned away")
    }

    /// The follower's memory of the segments it read (what tells a renumbered segment from a new
    /// one) against a model of the keys themselves, the last `capacity` of them: URIs from a
    /// small pool and a large one, some with byte ranges (one URI, many segments).
    @Test func recentSegmentsAnswerAsTheirURLsWould() {
        var random = SeededRandom(seed: 57)
        var hits = 0, misses = 0
        for pool in [30, 3_000] {
            var recent = RecentSegments(capacity: 100), model: [String] = []
            for sequence in 0..<20_000 {
                let name = "https://cdn.example/live/\(random.next() % UInt64(pool)).ts"
                let range = random.next() % 4 == 0 ? ByteRange(offset: Int(random.next() % 3) * 188, length: 188) : nil
                let segment = Segment(uri: name, duration: 2, mediaSequence: sequence, discontinuitySequence: 0, byteRange: range)
                let key = range.map { "\(name) \($0)" } ?? name
                let known = model.contains(key)
                #expect(recent.contains(segment) == known, "\(key)")
                if known { hits += 1 } else { misses += 1 }
                recent.insert(segment)
                if !known {
                    model.append(key)
                    if model.count > 100 { model.removeFirst() }
                }
            }
        }
        #expect(hits > 1_000 && misses > 1_000, "\(hits) known, \(misses) new")
    }

    /// The memory both of those use, against a model of the last `capacity` distinct values:
    /// tiny capacities, and large ones turned many times (each forgotten fingerprint's slot
    /// emptied with the ones after it moved back), from pools of every size; and its table
    /// stays within twice the capacity however long it turns.
    @Test(arguments: [1, 2, 3, 7, 64, 1_000, 4_096])
    func recentFingerprintsAnswerAsTheLastDistinctValuesWould(capacity: Int) {
        var random = SeededRandom(seed: UInt64(capacity))
        for pool in [capacity + 1, 2 * capacity + 3, 20_000] {
            var recent = RecentFingerprints(capacity: capacity)
            var model: [Int] = [], inModel = Set<Int>()
            for _ in 0..<30_000 {
                let value = Int(random.next() % UInt64(pool))
                let fresh = !inModel.contains(value)
                #expect(recent.insert(Fingerprint("value \(value)")) == fresh, "\(value) of \(pool)")
                if fresh {
                    model.append(value)
                    inModel.insert(value)
                    if model.count > capacity { inModel.remove(model.removeFirst()) }
                }
                let probe = Int(random.next() % UInt64(pool))
                #expect(recent.contains(Fingerprint("value \(probe)")) == inModel.contains(probe), "\(probe) of \(pool)")
            }
            var slots = 1
            while slots < 2 * capacity { slots *= 2 }
            #expect(recent.slotCount <= max(slots, 16), "\(recent.slotCount) slots for \(capacity)")
        }
    }
}

