import Logging
import ServiceLifecycle

/// `serve` as one service group. Started in order (the outputs first) and stopped in reverse at
/// SIGTERM or SIGINT: the API stops taking requests, the reload stops listening, the line-up ends
/// every channel (each engine's session closed, its last records written), and only then do the
/// outputs flush and the collector send or spool what is left. A service that fails stops them all.
public enum ServeServices {
    public static func group(outputs: any Service, lineup: Lineup, reload: ConfigReload, api: any Service,
                             logger: Logger) -> ServiceGroup {
        let services: [any Service] = [outputs, lineup, reload, api]
        return ServiceGroup(configuration: .init(services: services.map { .init(service: $0) },
                                                 gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    }
}
