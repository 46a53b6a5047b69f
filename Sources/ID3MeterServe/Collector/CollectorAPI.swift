import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import ID3Meter
import ID3MeterReport
import Logging
import NIOCore
import Prometheus

/// `collect`'s HTTP side: the other end of docs/COLLECTOR.md. A batch posted (to `/` or
/// `/records`) is stored whole, once, then answered 200; a resend of a batch already kept is
/// answered 200 and not stored again; a batch past `maximumBatchBytes` is answered 413 (the meter
/// splits it); one that is not a batch of records, 400 (the meter dead-letters it); a store that
/// cannot take it now (a full disk, a database away), 503 with `Retry-After` (the meter sends it
/// again). Posting needs a write token when tokens are set, as `serve`'s API does.
public struct CollectorAPI: Sendable {
    public let store: any RecordStore
    public let registry: PrometheusCollectorRegistry
    private let policy: APIPolicy
    private let connections: APIConnections
    private let maximumBatchBytes: Int
    /// Batches read and stored at once hold at most one largest batch's bytes between them.
    private let budget: BatchBudget
    private let logger: Logger
    private let metrics: Metrics

    /// The largest batch taken by default: a second of a few thousand channels' records.
    public static let defaultMaximumBatchBytes = 16 << 20

    public init(store: any RecordStore, registry: PrometheusCollectorRegistry, policy: APIPolicy = APIPolicy(),
                maximumBatchBytes: Int = defaultMaximumBatchBytes, logger: Logger) {
        self.store = store
        self.registry = registry
        self.policy = policy
        self.maximumBatchBytes = maximumBatchBytes
        budget = BatchBudget(limit: maximumBatchBytes, registry: registry)
        self.logger = logger
        connections = APIConnections(maximum: policy.maximumConnections, registry: registry)
        metrics = Metrics(registry: registry)
    }

    private struct Metrics: Sendable {
        let batches: Counter, resent: Counter, records: Counter, kept: Counter, refused: Counter, failed: Counter

        init(registry: PrometheusCollectorRegistry) {
            batches = registry.counter("id3meter_collector_batches_total", help: "Batches stored.")
            resent = registry.counter("id3meter_collector_batches_resent_total", help: "Batches posted again after they were stored: answered, not stored again.")
            records = registry.counter("id3meter_collector_records_total", help: "Records in the batches stored.")
            kept = registry.counter("id3meter_collector_records_kept_total",
                                    help: "Records kept: those of the batches stored, less deliveries of a (channel, tag_id) already kept.")
            refused = registry.counter("id3meter_collector_batches_refused_total", help: "Posts refused for good (400, 413): not batches, or too big.")
            failed = registry.counter("id3meter_collector_store_failures_total", help: "Batches the store could not take (503): the meter sends them again.")
        }
    }

    public func router() -> Router<APIContext> {
        let router = Router(context: APIContext.self)
        router.add(middleware: APIMethods { path in
            switch path {
            case "/", "/records": [.post]
            case let path where APIServer.probePaths.contains(path): [.get, .head]
            default: nil
            }
        })
        router.add(middleware: APIAccess(tokens: policy.tokens))
        APIServer.addProbes(to: router, registry: registry)
        router.post("/") { [self] request, context in await take(request, by: context.caller ?? "local") }
        router.post("records") { [self] request, context in await take(request, by: context.caller ?? "local") }
        return router
    }

    /// The HTTP/1.1 server the router runs on (`APIServer`), as `serve`'s API's.
    public func server(tls: TLSConfiguration? = nil) throws -> HTTPServerBuilder {
        try APIServer.builder(connections: connections, policy: policy, tls: tls)
    }

    private func take(_ request: Request, by caller: String) async -> Response {
        let body: ByteBuffer
        do {
            var request = request
            body = try await request.collectBody(upTo: maximumBatchBytes)
        } catch is NIOTooManyBytesError {
            metrics.refused.increment()
            return Self.answer(.contentTooLarge, ["error": "a batch may hold \(maximumBatchBytes) bytes at most: split it"])
        } catch {
            metrics.refused.increment()
            return Self.answer(.badRequest, ["error": "the body could not be read: \(error)"])
        }
        return await budget.spending(body.readableBytes) { await take(body, of: request, by: caller) }
    }

    private func take(_ body: ByteBuffer, of request: Request, by caller: String) async -> Response {
        let batch: CollectedBatch
        do {
            let receivedAt = Date().timeIntervalSince1970
            batch = try body.withUnsafeReadableBytes { bytes throws(StoreError) in try BatchBody.batch(in: bytes, by: caller, at: receivedAt) }
        } catch {
            metrics.refused.increment()
            return Self.answer(.badRequest, ["error": "not a batch of meter records: \(error)"])
        }
        if let key = request.headers.first(where: { $0.name.canonicalName == "idempotency-key" })?.value, key.contains("\u{FFFD}") {
            metrics.refused.increment()
            return Self.answer(.badRequest, ["error": "Idempotency-Key is not UTF-8: send the batch's id as its UTF-8 bytes, or no key"])
        }
        if let key = request.headers.first(where: { $0.name.canonicalName == "idempotency-key" })?.value, key != batch.id {
            metrics.refused.increment()
            return Self.answer(.badRequest, ["error": "Idempotency-Key \(key) is not the batch's id \(batch.id)"])
        }
        let receipt: StoreReceipt
        do {
            receipt = try await store.store(batch)
        } catch {
            metrics.failed.increment()
            logger.error("\(error); answered 503: the meter keeps the batch and sends it again")
            var response = Self.answer(.serviceUnavailable, ["error": "\(error)"])
            response.headers[.retryAfter] = "5"
            return response
        }
        if receipt.alreadyHad {
            metrics.resent.increment()
        } else {
            metrics.batches.increment()
            metrics.records.increment(by: Int64(receipt.records))
            metrics.kept.increment(by: Int64(receipt.kept))
        }
        return Self.answer(.ok, Receipt(batch: batch.id, records: receipt.records, kept: receipt.kept, already: receipt.alreadyHad))
    }

    /// The answer to a batch taken: how many records it had, how many were kept, and whether it
    /// had been taken before.
    struct Receipt: Codable, Equatable {
        var batch: String
        var records: Int
        var kept: Int
        var already: Bool
    }

    private static func answer(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = ((try? encoder.encode(value)) ?? Data("{}".utf8)) + Data("\n".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
