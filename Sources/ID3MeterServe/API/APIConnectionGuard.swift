import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// One API connection's watch: it is counted in `APIConnections`, and it must send a whole
/// request, head and body, within `timeout` of opening or of its last answer, or it is closed.
/// That one deadline ends idle keep-alives, heads sent a byte at a time and bodies that never
/// finish alike. A connection in the probes' reserve is answered 503 and closed when it asks
/// for anything but a probe's path.
final class APIConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connections: APIConnections
    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var registered = false
    private var reserved = false
    /// The rest of a request refused from the reserve is not passed on.
    private var refusing = false

    init(connections: APIConnections, timeout: TimeAmount) {
        self.connections = connections
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopWaiting()
        connections.closed(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopWaiting()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            connections.busy(context.channel, true)
            let path = head.path.map { $0.prefix { $0 != "?" } } ?? ""
            if reserved, !([.get, .head].contains(head.method) && APIServer.probePaths.contains(String(path))) {
                refusing = true
                refuse(context)
                return
            }
        case .end:
            stopWaiting()
        case .body:
            break
        }
        guard !refusing else { return }
        context.fireChannelRead(data)
    }

    /// A request the HTTP parser could not read is answered here, in words, and the connection
    /// closed: a head past the limit is 431 (RFC 6585), anything else 400.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parser = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        refusing = true
        if case .headerOverflow = parser {
            answer(context, .requestHeaderFieldsTooLarge, "the request's head is over \(APIPolicy.maximumHeadBytes) bytes")
        } else {
            answer(context, .badRequest, "not an HTTP/1.1 request (\(parser))")
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            connections.busy(context.channel, false)
            wait(context)
        }
        context.write(data, promise: promise)
    }

    /// 503: the API is full of requests being answered.
    private func refuse(_ context: ChannelHandlerContext) {
        answer(context, .serviceUnavailable,
               "the API holds --api-max-connections requests being answered; this place is kept for /healthz, /readyz and /metrics: try again",
               retryAfter: true)
    }

    /// `status` and `text`, then the connection closed.
    private func answer(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ text: String, retryAfter: Bool = false) {
        let body = context.channel.allocator.buffer(string: text + "\n")
        var head = HTTPResponse(status: status, headerFields: [
            .contentType: "text/plain; charset=utf-8", .contentLength: "\(body.readableBytes)", .connection: "close",
        ])
        if retryAfter { head.headerFields[.retryAfter] = "1" }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !registered else { return }
        registered = true
        reserved = connections.opened(context.channel)
        wait(context)
    }

    private func wait(_ context: ChannelHandlerContext) {
        stopWaiting()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    private func stopWaiting() {
        deadline?.cancel()
        deadline = nil
    }
}
