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
        case .first(let sequence): Iterator(first: Chosen(sequence.makeAsyncIterator()), second: nil)
        case .second(let sequence): Iterator(first: nil, second: Chosen(sequence.makeAsyncIterator()))
        }
    }

    /// The chosen sequence's iterator, in an object: an enum's payload, or an optional's, is
    /// copied out to call its mutating `next` and back, the whole iterator (a feeder's, with its
    /// buffers) each way at every element; an object's property is mutated in place.
    final class Chosen<Base: AsyncIteratorProtocol> {
        var iterator: Base

        init(_ iterator: Base) { self.iterator = iterator }
    }

    struct Iterator: AsyncIteratorProtocol {
        let first: Chosen<First.AsyncIterator>?
        let second: Chosen<Second.AsyncIterator>?

        mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(Failure) -> Element? {
            if let first { return try await first.iterator.next(isolation: actor) }
            if let second { return try await second.iterator.next(isolation: actor) }
            return nil
        }
    }
}
