import NIOCore
import NIOPosix

extension ID3MeterCommand {
    /// Runs every task on the process's event loops (swift-nio's singleton group, which the HTTP
    /// client and the API also use) instead of Swift's own thread pool beside them: `serve`'s
    /// channels hand each fetch to an event loop and each answer back to a task, a switch between
    /// threads each way, a thousand times a second over a line-up. To be called once, from the
    /// main thread, before any task is made; `false` when it could not be done (the pool is kept).
    @discardableResult
    public static func runTasksOnEventLoops() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
