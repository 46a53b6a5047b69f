import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore

/// `InputFailure.code`: one per kind, comparable, stable names.
@Suite("Failure codes")
struct FailureCodeTests {
    struct Cause: Error {}

    /// One of each kind.
    static let kinds: [InputFailure.Kind] = [
        .cannotOpen(Cause()), .empty, .unknownForm, .notTransportStream, .readFailed(afterBytes: 1, Cause()),
        .damage(.lostSync(at: 0, skipped: 1)), .noTimedID3(.transportStream), .untimedEventMessages, .noSegmentHasTimedID3,
        .playlist(Cause()), .audioRendition(Cause()), .reloadFailed(Cause()), .leftLiveWindow(1...2),
        .mediaSequenceWentBack(from: 2, to: 1), .renumbered(from: 1, to: 9), .discontinuitySequenceWentBack(from: 2, to: 1),
        .sampleEncrypted(method: "SAMPLE-AES", keyFormats: []), .segmentNote("x"), .segmentSkipped(mediaSequence: 1, Cause()),
        .eventsDropped(kept: 1, dropped: 1), .interstitialFailed(id: "ad", Cause()), .severalPrograms([1, 2]), .lostInARow(3),
        .gaveUp(playlist: "p", lostInARow: 3, untried: 1), .notResumable, .noMatch, .nothingReadable(extensions: ["ts"]),
        .heldBack(count: 2, last: "x"), .switchedPath(from: "a", to: "b", onBackup: true, because: .steered(pathway: "b")),
        .steeringFailed(Cause()), .remotePeriod("p", failure: nil), .noSegmentAvailable, .bufferBeyondReach(1...2, read: 1),
        .serverClock("x"),
    ]

    @Test func everyKindHasACodeOfItsOwnNamedInSnakeCase() {
        let codes = Self.kinds.map(\.code)
        #expect(Set(codes).count == Self.kinds.count, "two kinds share a code")
        #expect(codes.allSatisfy { $0.rawValue.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" } }, "\(codes)")
        #expect(InputFailure.Kind.noTimedID3(.packedAudio).code.rawValue == "no_timed_id3")
        #expect(InputFailure.Code(rawValue: "cannot_open") == .cannotOpen)
    }

    /// What a real read says is matched by code, without a switch over every kind.
    @Test func aReadsFailuresAreMatchedByCode() async throws {
        let folder = try Samples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.ts")
        let noise = folder.appendingPathComponent("noise.bin")
        try Data().write(to: empty)
        try Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }).write(to: noise)
        for (input, code) in [(folder.appendingPathComponent("missing.ts").path, InputFailure.Code.cannotOpen),
                              (empty.path, .empty), (noise.path, .unknownForm)] {
            var failures: [InputFailure] = []
            await TagScanner().scan(input) { if case .failure(let failure) = $0 { failures.append(failure) } }
            #expect(failures.map(\.code) == [code], "\(input): \(failures)")
        }
    }
}
