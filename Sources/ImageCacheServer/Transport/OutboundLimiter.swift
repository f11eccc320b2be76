import ImageCacheKit
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
        guard let rest = message.rest else {
            context.write(wrapOutboundOut(.byteBuffer(message.bytes)), promise: written)
            return
        }
        context.write(wrapOutboundOut(.byteBuffer(message.bytes)), promise: nil)
        Self.write(rest, context: context, promise: written)
    }

    /// Writes a sealed file's content with `sendfile`. The channel gets a handle of its own
    /// on the file's descriptor (NIO lets one handle be used by one write at a time, and the
    /// file serves every answer of its thumbnail); the file itself is kept alive, descriptor
    /// open, until the write is done or failed, whatever the memory tier evicts meanwhile.
    private static func write(_ file: SealedMemoryFile, context: ChannelHandlerContext, promise: EventLoopPromise<Void>) {
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: file.descriptor)
        promise.futureResult.whenComplete { _ in
            // The descriptor belongs to `file`, which closes it when the last holder goes.
            // NIO completes the promise after its last use of the handle; this cannot fail.
            do {
                _ = try handle.takeDescriptorOwnership()
            } catch {
                assertionFailure("a sealed file's handle was still in use when its write completed: \(error)")
            }
            // Until here: NIO treats a descriptor closed under a pending `sendfile` (EBADF)
            // as a broken invariant and stops the process.
            withExtendedLifetime(file) {}
        }
        let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: file.count)
        context.write(NIOAny(IOData.fileRegion(region)), promise: promise)
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
