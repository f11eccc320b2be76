import Logging
import NIOCore

/// The slow-reader policy of one connection (CONTRACT §2), as a pipeline stage.
///
/// It counts the bytes handed to the channel and not yet written to the kernel. Past the
/// soft bound it drops `*.progress` notifications and stops reading requests (so a client
/// that sends without reading cannot pile up answers); past the hard bound it closes the
/// connection and logs why. Responses and other notifications are never dropped: they are
/// delivered, or the connection ends. The daemon's memory per connection is therefore
/// bounded by the hard bound whatever the client does.
final class OutboundLimiter: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = OutboundMessage
    typealias OutboundOut = ByteBuffer

    private let softLimit: Int
    private let hardLimit: Int
    private let metrics: ServerMetrics
    private let logger: Logger
    private var queuedBytes = 0
    private var readHeld = false
    private var closing = false

    init(limits: ServerLimits, metrics: ServerMetrics, logger: Logger) {
        self.softLimit = limits.outboundSoftLimit
        self.hardLimit = limits.outboundHardLimit
        self.metrics = metrics
        self.logger = logger
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = unwrapOutboundIn(data)
        let size = message.bytes.readableBytes
        if closing {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if message.priority == .progress, queuedBytes + size > softLimit {
            metrics.droppedProgress()
            promise?.succeed(())
            return
        }
        if queuedBytes > 0, queuedBytes + size > hardLimit {
            closing = true
            metrics.slowReaderDisconnected()
            logger.warning("closing a connection whose client stopped reading", metadata: [
                "queuedBytes": "\(queuedBytes)", "limit": "\(hardLimit)",
            ])
            promise?.fail(ChannelError.ioOnClosedChannel)
            context.close(promise: nil)
            return
        }
        if message.priority == .response { metrics.answered() }
        queuedBytes += size
        metrics.queued(size, connectionTotal: queuedBytes)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { [self] _ in
            self.queuedBytes -= size
            self.metrics.queued(-size, connectionTotal: self.queuedBytes)
            if self.readHeld, self.queuedBytes <= self.softLimit / 2 {
                self.readHeld = false
                context.read()
            }
        }
        if let promise { written.futureResult.cascade(to: promise) }
        context.write(wrapOutboundOut(message.bytes), promise: written)
    }

    func read(context: ChannelHandlerContext) {
        if queuedBytes > softLimit {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        context.fireChannelInactive()
    }
}
