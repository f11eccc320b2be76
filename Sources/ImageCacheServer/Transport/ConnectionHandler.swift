import Logging
import NIOCore

/// The last pipeline stage of a connection: turns lines into dispatched work.
///
/// Runs on the connection's event loop and never blocks it: a line is validated here (cheap
/// and bounded by `max_request_bytes`), then the method runs in its own task so requests on
/// one connection proceed concurrently and a slow handler never delays the next line.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = InboundFrame

    private let session: Session
    private let dispatcher: Dispatcher
    private let maxRequestBytes: Int
    private var stopped = false

    init(session: Session, dispatcher: Dispatcher, maxRequestBytes: Int) {
        self.session = session
        self.dispatcher = dispatcher
        self.maxRequestBytes = maxRequestBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !stopped else { return }
        switch unwrapInboundIn(data) {
        case .line(let line):
            dispatcher.handle(line: line, session: session)
        case .tooLong:
            stopped = true
            session.logger.notice("request line too long; closing the connection", metadata: ["limit": "\(maxRequestBytes)"])
            let answer = MessageEncoder.failure(id: nil, error: RPCError(
                .invalidRequest, "the request line is longer than max_request_bytes (\(maxRequestBytes) bytes)"))
            let channel = context.channel
            context.writeAndFlush(NIOAny(answer)).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            session.inputDidClose()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        session.didClose()
        dispatcher.sessionEnded(session)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset by the peer is ordinary (a client that vanished); anything else is worth a line.
        session.logger.debug("connection error; closing", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}
