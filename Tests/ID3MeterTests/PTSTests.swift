import Testing
@testable import ID3Meter
@testable import ID3MeterCore

@Suite("33-bit PTS")
struct PTSTests {
    @Test func distanceTakesTheShortWayRoundTheWrap() {
        let nearWrap = PTS.wrap - 90_000
        #expect(PTS.distance(from: nearWrap, to: 90_000) == 180_000)
        #expect(PTS.distance(from: 90_000, to: nearWrap) == -180_000)
        #expect(PTS.distance(from: 1_000, to: 901_000) == 900_000)
        #expect(PTS.isBefore(nearWrap, 0))
        #expect(!PTS.isBefore(0, nearWrap))
    }

    @Test func libavformatsUnwrappedTimestampsGoBackToTheCarriedValue() {
        #expect(PTS.asCarried(PTS.wrap + 5) == 5)
        #expect(PTS.asCarried(-90_000) == PTS.wrap - 90_000)
        #expect(PTS.seconds(135_000) == 1.5)
    }
}
