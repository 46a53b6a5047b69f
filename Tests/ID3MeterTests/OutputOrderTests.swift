import Foundation
import Synchronization
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// An actor output that takes its time (it gives way several times in each write), as a records
/// file on a busy disk does.
actor SlowOutput: MeterOutput {
    private(set) var payloads: [String] = []
    func write(_ record: MeterRecord) async {
        for _ in 0..<5 { await Task.yield() }
        payloads.append(record.delivery?.payload ?? "")
    }
    func finish() {}
}

/// The last output, as the checkpoint is: at each record, what the slow output before it holds.
final class OrderWatch: MeterOutput {
    private let before: SlowOutput
    private let state = Mutex<(seen: [String], ahead: Int)>(([], 0))
    init(before: SlowOutput) { self.before = before }

    func write(_ record: MeterRecord) async {
        let held = await before.payloads
        state.withLock { state in
            state.seen.append(record.delivery?.payload ?? "")
            // The output before may not hold a record this one has not been given.
            if held != state.seen { state.ahead += 1 }
        }
    }
    func finish() {}
    var ahead: Int { state.withLock { $0.ahead } }
    var seen: Int { state.withLock { $0.seen.count } }
}

/// `serve`'s channels write to one `OutputSet` from tasks of their own: a record goes through
/// every output before the next starts, so the checkpoint (last) never points past a record it
/// has not seen.
@Suite("Output order", .timeLimit(.minutes(1)))
struct OutputOrderTests {
    @Test func aRecordGoesThroughEveryOutputBeforeTheNextStarts() async {
        let slow = SlowOutput()
        let watch = OrderWatch(before: slow)
        let outputs = OutputSet([slow, watch])
        await withTaskGroup(of: Void.self) { group in
            for channel in 0..<20 {
                group.addTask {
                    for index in 0..<10 {
                        let record = MeterRecord.delivery("www.nielsen.com/\(channel)/\(index)",
                                                          context: TagContext(pts: Int64(index), origin: TagOrigin(source: "c\(channel)"),
                                                                              programDateTime: nil), at: Date())
                        await outputs.write(record)
                    }
                }
            }
        }
        await outputs.finish()
        #expect(watch.seen == 200)
        #expect(watch.ahead == 0, "the output before the last held records the last had not been given")
    }
}
