import Testing
@testable import ID3MeterCore
import SampleGenerator

/// The demuxer's per-PID state against the `Dictionary` it replaced.
@Suite("Values by PID")
struct PIDMapTests {
    /// Random reads, writes, in-place changes and removals, over a few PIDs as a demuxer makes
    /// them and over as many as a hostile PMT may declare (looked up through an index then).
    @Test(arguments: [4, 40])
    func behavesAsADictionary(pids: Int) {
        var random = SeededRandom(seed: 7)
        var map = PIDMap<[UInt8]>(), reference: [Int: [UInt8]] = [:]
        for step in 0..<20_000 {
            let pid = Int(random.next() % UInt64(pids)) * 199 % 8192
            switch random.next() % 5 {
            case 0:
                map[pid] = [UInt8(step & 0xFF)]
                reference[pid] = [UInt8(step & 0xFF)]
            case 1:
                map[pid] = nil
                reference[pid] = nil
            case 2:
                // Changed in place when there, nothing made when not.
                map[pid]?.append(1)
                reference[pid]?.append(1)
            case 3:
                map[pid, default: [9]].append(2)
                reference[pid, default: [9]].append(2)
            default:
                #expect(map.removeValue(forKey: pid) == reference.removeValue(forKey: pid))
            }
            #expect(map[pid] == reference[pid])
            #expect(map.sortedPIDs == reference.keys.sorted())
        }
    }

    /// Two demuxers in one state compare equal whichever order their PIDs came in (a block of a
    /// big file is taken on that comparison).
    @Test func equalityIgnoresTheOrderPIDsCameIn() {
        var first = PIDMap<UInt8>(), second = PIDMap<UInt8>()
        first[0x100] = 1
        first[0x101] = 2
        second[0x101] = 2
        second[0x100] = 1
        #expect(first == second)
        second[0x100] = 3
        #expect(first != second)
        second[0x100] = nil
        #expect(first != second)
    }
}
