import NIOCore
import NIOHTTPTypes

/// One API connection's watch: it is counted in `APIConnections`, and it must send a whole
/// request, head and body, within `timeout` of opening or of its last answer, or it is closed.
/// That one deadline ends idle keep-alives, heads sent a byte at a time and bodies that never
/// finish alike.
final class APIConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connections: APIConnections
    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var registered = false

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
        if case .end = unwrapInboundIn(data) {
            stopWaiting()
            connections.answering(context.channel, true)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            connections.answering(context.channel, false)
            wait(context)
        }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !registered else { return }
        registered = true
        connections.opened(context.channel)
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
