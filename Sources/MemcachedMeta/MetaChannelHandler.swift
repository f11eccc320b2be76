import NIOCore

/// A request on its way to a connection, with the promise its answer completes.
struct MetaOutbound: Sendable {
    var command: MetaCommand
    var promise: EventLoopPromise<MetaResponse>
}

/// Pipelining on one connection: requests are written as they come, without waiting for the
/// previous answer, and answers (which memcached sends in request order) complete the
/// requests' promises first in, first out.
///
/// A request whose caller timed out keeps its place: its answer, when it comes, pops its
/// (already failed) promise, so later answers stay matched. Whatever ends the connection (the
/// server closing, a protocol error, an ejection) fails every request still waiting.
final class MetaChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = MetaResponse
    typealias OutboundIn = MetaOutbound
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<EventLoopPromise<MetaResponse>>()
    private var closed = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        guard !closed else {
            request.promise.fail(MemcachedFailure.connectionClosed)
            promise?.fail(MemcachedFailure.connectionClosed)
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: 64)
        request.command.encode(into: &buffer)
        waiting.append(request.promise)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in request.promise.fail(MemcachedFailure.connectionClosed) }
        if let promise { written.futureResult.cascade(to: promise) }
        context.write(wrapOutboundOut(buffer), promise: written)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let promise = waiting.popFirst() else {
            // An answer nobody asked for: the stream cannot be trusted any more.
            failAll(MemcachedFailure.protocolError)
            context.close(promise: nil)
            return
        }
        promise.succeed(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(MemcachedFailure.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error is MetaResponseDecoder.Failure ? MemcachedFailure.protocolError : MemcachedFailure.connectionClosed)
        context.close(promise: nil)
    }

    private func failAll(_ failure: MemcachedFailure) {
        closed = true
        while let promise = waiting.popFirst() { promise.fail(failure) }
    }
}

/// Why an operation got no answer from its node. Every one counts as a failure of the node
/// (`MemcachedClient.Configuration.ejectAfter`), except `ejected` (no attempt was made).
public enum MemcachedFailure: Error, Sendable, Equatable {
    /// No answer within the operation's time-out (the request keeps its place in the
    /// connection's queue, so its late answer is consumed and never taken for another's).
    case timeout
    /// The connection could not be made (refused, unreachable, connect time-out).
    case connect
    /// The connection ended before the answer.
    case connectionClosed
    /// The server sent something that is not the meta protocol.
    case protocolError
    /// The node is ejected: nothing was sent.
    case ejected
}
