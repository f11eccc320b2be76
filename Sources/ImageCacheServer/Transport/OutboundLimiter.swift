import ImageCacheKit
import Logging
import NIOCore

/// The slow-reader policy of one connection (docs/protocol.md, "Sessions"), as a pipeline stage.
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
    typealias OutboundOut = IOData

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
        let size = message.size
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
        // The file's content is sent with `sendfile`: the channel gets a handle of its own
        // on the file's descriptor (NIO lets one handle be used by one write at a time, and
        // the file serves every answer of its thumbnail).
        let file = message.rest
        let handle = file.map { NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: $0.descriptor) }
        let written = context.eventLoop.makePromise(of: Void.self)
        // One callback for both jobs: a second one on the same future costs an allocation.
        written.futureResult.assumeIsolated().whenComplete { [self] _ in
            if let handle, let file { Self.giveBack(handle, of: file) }
            self.queuedBytes -= size
            self.metrics.queued(-size, connectionTotal: self.queuedBytes)
            if self.readHeld, self.queuedBytes <= self.softLimit / 2 {
                self.readHeld = false
                context.read()
            }
        }
        if let promise { written.futureResult.cascade(to: promise) }
        guard let handle else {
            context.write(wrapOutboundOut(.byteBuffer(message.bytes)), promise: written)
            return
        }
        context.write(wrapOutboundOut(.byteBuffer(message.bytes)), promise: nil)
        let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: message.restBytes)
        guard let tail = message.tail else {
            context.write(wrapOutboundOut(.fileRegion(region)), promise: written)
            return
        }
        context.write(wrapOutboundOut(.fileRegion(region)), promise: nil)
        context.write(wrapOutboundOut(.byteBuffer(tail)), promise: written)
    }

    /// Takes a sealed file's descriptor back from the handle its write used. The file itself
    /// was kept alive, descriptor open, until here, whatever the memory tier evicted
    /// meanwhile: NIO treats a descriptor closed under a pending `sendfile` (EBADF) as a
    /// broken invariant and stops the process.
    private static func giveBack(_ handle: NIOFileHandle, of file: SealedMemoryFile) {
        // The descriptor belongs to `file`, which closes it when the last holder goes.
        // NIO completes the promise after its last use of the handle; this cannot fail.
        do {
            _ = try handle.takeDescriptorOwnership()
        } catch {
            assertionFailure("a sealed file's handle was still in use when its write completed: \(error)")
        }
        withExtendedLifetime(file) {}
    }

    func read(context: ChannelHandlerContext) {
        if queuedBytes > softLimit {
            if !readHeld { metrics.readPaused() }
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
