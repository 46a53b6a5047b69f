import Hummingbird
import NIOPosix

/// Where the API's server runs: one of the process's event loops, the listener and every
/// connection it accepts alike. Over the group's loops, a flood of connections had one loop
/// accept while the other registered what it was handed, and that one ran its queue of
/// registrations for tens of ms without polling (NIO runs the tasks queued meanwhile too before
/// it polls again): a probe that had sent its request was not read before a thousand newer
/// connections made it the oldest idle one, and was evicted (an RST). On one loop, accepts come
/// four to a turn between polls. Measured with scripts/api_flood.py at 1,000 places: a probe reset
/// in 7 of 20 floods before, in none of 35 after; the slowest probe 23-104 ms before, 60-114 after.
enum APIEventLoop {
    static func provider() -> EventLoopGroupProvider { .shared(MultiThreadedEventLoopGroup.singleton.next()) }
}
