import LineFraming
import Logging
import NIOCore

/// The last pipeline stage of a connection: turns lines into dispatched work.
///
/// Runs on the connection's event loop and never blocks it: a line is validated here (cheap
/// and bounded by `max_request_bytes`), then the method runs in its own task so requests on
/// one connection proceed concurrently and a slow handler never delays the next line.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

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
        dispatcher.handle(line: unwrapInboundIn(data), session: session)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is LineFrameDecoder.LineTooLong {
            // The decoder drops every later byte: answer the offending request, then close.
            guard !stopped else { return }
            stopped = true
            session.logger.notice("request line too long; closing the connection", metadata: ["limit": "\(maxRequestBytes)"])
            let answer = Answer.lineTooLong(limit: maxRequestBytes)
            let channel = context.channel
            context.writeAndFlush(NIOAny(answer)).whenComplete { _ in
                channel.close(promise: nil)
            }
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            session.inputDidClose()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Out of the registry first: whoever `didClose` wakes (a shutdown waiting for the
        // session to drain) must no longer count it.
        dispatcher.sessionEnded(session)
        session.didClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset by the peer is ordinary (a client that vanished); anything else is worth a line.
        session.logger.debug("connection error; closing", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}
