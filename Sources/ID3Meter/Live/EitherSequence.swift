/// One of two sequences of the same elements, chosen at run time, as one concrete type: a
/// `StreamMeter` paces with a clock that waits or with one that does not, and hands out either
/// as `some AsyncSequence` rather than an existential.
struct EitherSequence<First: AsyncSequence & Sendable, Second: AsyncSequence & Sendable>: AsyncSequence, Sendable
where First.Element == Second.Element, First.Failure == Second.Failure {
    typealias Element = First.Element
    typealias Failure = First.Failure

    enum Choice: Sendable {
        case first(First)
        case second(Second)
    }

    let choice: Choice

    func makeAsyncIterator() -> Iterator {
        switch choice {
        case .first(let sequence): Iterator(state: .first(sequence.makeAsyncIterator()))
        case .second(let sequence): Iterator(state: .second(sequence.makeAsyncIterator()))
        }
    }

    struct Iterator: AsyncIteratorProtocol {
        enum State {
            case first(First.AsyncIterator)
            case second(Second.AsyncIterator)
        }

        var state: State

        mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(Failure) -> Element? {
            switch state {
            case .first(var iterator):
                defer { state = .first(iterator) }
                return try await iterator.next(isolation: actor)
            case .second(var iterator):
                defer { state = .second(iterator) }
                return try await iterator.next(isolation: actor)
            }
        }
    }
}
