#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore

/// Stops accepting connections for a moment when `accept()` fails for want of descriptors or
/// kernel memory, instead of retrying at once.
///
/// At the open-file limit a client stays in the listening socket's backlog, so the socket
/// stays readable and every `accept()` fails with EMFILE: the event loop spins at 100 % CPU
/// while idle. NIO's own `AcceptBackoffHandler` does not help here (swift-nio 2.101): it
/// delays the pipeline's next `read()`, but when the *first* accept of a read fails the
/// channel's read stays pending and it stays registered for readability, so the loop spins on.
/// Turning `autoRead` off does unregister it; this handler does that, and turns it back on
/// after `pause`, when the next accept is tried (and paused again if it fails again).
final class AcceptPause: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    /// How long accepting stops after a failure that passes only when resources are freed.
    static let pause: TimeAmount = .milliseconds(250)

    private let metrics: ServerMetrics
    private let logger: Logger
    private var paused = false

    init(metrics: ServerMetrics, logger: Logger) {
        self.metrics = metrics
        self.logger = logger
    }

    /// Whether `error` is an accept() failure that waiting can cure.
    static func isResourceShortage(_ error: any Error) -> Bool {
        guard let io = error as? IOError else { return false }
        return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(io.errnoCode)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard Self.isResourceShortage(error) else {
            context.fireErrorCaught(error)
            return
        }
        let count = metrics.acceptFailed()
        if count % 1000 == 1 {
            // The first of a run, and then rarely: an operator should raise LimitNOFILE=.
            logger.warning("cannot accept a connection: the open-file limit is reached; pausing accepts (raise LimitNOFILE=)",
                           metadata: ["error": "\(error)", "failures": "\(count)"])
        }
        guard !paused, let options = context.channel.syncOptions else { return }
        paused = true
        try? options.setOption(ChannelOptions.autoRead, value: false)
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.pause) { [self] in
            paused = false
            try? options.setOption(ChannelOptions.autoRead, value: true)
        }
    }
}
