import ID3MeterCore
import Logging
import ServiceLifecycle

/// One stream's metering as a swift-service-lifecycle `Service`, for a backend's own
/// `ServiceGroup`: `run()` meters until the stream ends, or until the group shuts down
/// gracefully or the task is cancelled, and the engine's session is ended (`end()`) in every
/// case. What the stream does (failures, warnings, a resumption) is logged on `logger` with the
/// input as metadata; deliveries are the engine's.
///
/// A stream that ends (a VOD, `stopAfter`) returns from `run()`; one whose reading failed (it
/// cannot be opened, its playlist cannot be had, too many segments were lost) throws that
/// `InputFailure` once its session has ended. In a group that should go on, give the service
/// `successTerminationBehavior: .ignore` and `failureTerminationBehavior: .ignore` (a group
/// shuts down when a service throws, by default).
public struct MeteringService: Service {
    public let meter: StreamMeter
    public let engine: any MeteringEngine
    public let logger: Logger

    public init(_ meter: StreamMeter, engine: any MeteringEngine, logger: Logger) {
        self.meter = meter
        self.engine = engine
        var logger = logger
        logger[metadataKey: "input"] = "\(meter.input)"
        self.logger = logger
    }

    public func run() async throws(InputFailure) {
        logger.info("metering", metadata: ["channel": "\(meter.session.channelName)"])
        let (delivered, failure) = await cancelWhenGracefulShutdown { [meter, engine, logger] () async -> (Int, InputFailure?) in
            var delivered = 0
            var events = meter.events(engine: engine).makeAsyncIterator()
            do throws(InputFailure) {
                while let event = try await events.next(isolation: #isolation) {
                    switch event {
                    case .delivered: delivered += 1
                    case .read(.failure(let failure)): logger.error("\(failure)")
                    case .read(.warning(let warning)): logger.warning("\(warning)")
                    case .read(.resumed(let resumption)): logger.notice("resumed: \(resumption)")
                    default: break
                    }
                }
            } catch {
                return (delivered, error)
            }
            return (delivered, nil)
        }
        guard let failure else { return logger.info("metering ended", metadata: ["delivered": "\(delivered)"]) }
        logger.error("metering failed: \(failure)", metadata: ["delivered": "\(delivered)", "code": "\(failure.code.rawValue)"])
        throw failure
    }
}
