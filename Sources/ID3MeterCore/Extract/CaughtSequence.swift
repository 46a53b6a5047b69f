/// A reading's sequence with the failure that ended it handed out as its last element, for a
/// caller that says every failure the same way (the command line's lines, `serve`'s log and
/// status, a test's list of events): `TagSource(...).caught { .failure($0) }`.
package struct CaughtSequence<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element: Sendable {
    package typealias Element = Base.Element
    package typealias Failure = Never

    let base: Base
    let element: @Sendable (Base.Failure) -> Base.Element

    package func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), element: element) }

    package struct Iterator: AsyncIteratorProtocol {
        // The base as a stored value, mutated in place, and a flag for its end: an optional's
        // payload is copied out to call its mutating `next` and back, the whole iterator (a
        // feeder's, with its buffers) each way at every element.
        var base: Base.AsyncIterator
        var ended = false
        let element: @Sendable (Base.Failure) -> Base.Element

        init(base: Base.AsyncIterator, element: @escaping @Sendable (Base.Failure) -> Base.Element) {
            self.base = base
            self.element = element
        }

        package mutating func next() async -> Element? { await next(isolation: nil) }

        package mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            guard !ended else { return nil }
            do throws(Base.Failure) {
                return try await base.next(isolation: actor)
            } catch {
                ended = true
                return element(error)
            }
        }
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// This sequence, its thrown failure handed out as a last element made by `element`.
    package func caught(_ element: @escaping @Sendable (Failure) -> Element) -> CaughtSequence<Self> {
        CaughtSequence(base: self, element: element)
    }
}
