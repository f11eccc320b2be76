import ImageCacheSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// Writes one HTTP response over time: a head, body pieces, an end — or a broken ending
/// (a close mid-body, a reset). Safe from any thread: every write hops onto the connection's
/// event loop. This is what lets the simulator serve slow, stalled, endless and broken bodies.
public final class ResponseWriter: Sendable {
    /// The request this writer answers.
    public let request: SimulatedRequest
    private let context: NIOLoopBound<ChannelHandlerContext>
    private let eventLoop: any EventLoop
    private let keepAlive: Bool
    private let state = LockedState(State())

    private struct State {
        var bodyBytes = 0
        var ended = false
        var brokenByServer = false
        var closed = false
    }

    init(context: ChannelHandlerContext, request: SimulatedRequest, keepAlive: Bool) {
        self.context = NIOLoopBound(context, eventLoop: context.eventLoop)
        eventLoop = context.eventLoop
        self.request = request
        self.keepAlive = keepAlive
        context.channel.closeFuture.whenComplete { [self] _ in self.state.withLock { $0.closed = true } }
    }

    /// False once the connection is closed (by either side): a streaming loop stops here.
    public var isOpen: Bool { state.withLock { !$0.closed } }

    /// Body bytes written so far.
    public var bytesWritten: Int { state.withLock { $0.bodyBytes } }

    /// A whole response at once (Content-Length added when missing).
    public func respond(_ response: SimulatedResponse) {
        var headers = response.headers
        if !headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            headers.append(("Content-Length", String(response.body.count)))
        }
        writeHead(status: response.status, headers: headers)
        if !response.body.isEmpty { write(response.body) }
        end()
    }

    /// The status line and headers. Without Content-Length the body is sent chunked.
    public func writeHead(status: Int, headers: [(String, String)]) {
        var fields = HTTPHeaders(headers)
        if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: fields)
        onLoop { context in
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        }
    }

    /// A piece of body. The future completes when it is handed to the socket, so a loop that
    /// waits for it never buffers more than one piece (backpressure for huge bodies).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        onLoop { context in
            self.state.withLock { $0.bodyBytes += bytes.count }
            let buffer = context.channel.allocator.buffer(bytes: bytes)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: promise)
        } otherwise: {
            promise.fail(ChannelError.ioOnClosedChannel)
        }
        return promise.futureResult
    }

    /// Ends the response; the connection stays open for the next request when keep-alive.
    public func end() {
        let keepAlive = keepAlive
        onLoop { context in
            self.state.withLock { $0.ended = true }
            let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
            if !keepAlive {
                let channel = context.channel
                done.whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    /// Closes the connection mid-response with a FIN: a truncated body.
    public func closeAbruptly() {
        onLoop { context in
            self.state.withLock { $0.brokenByServer = true }
            context.close(promise: nil)
        }
    }

    /// Resets the connection (SO_LINGER 0, so the close sends an RST): a connection reset.
    public func reset() {
        onLoop { context in
            self.state.withLock { $0.brokenByServer = true }
            let channel = context.channel
            guard let provider = channel as? any SocketOptionProvider else {
                channel.close(promise: nil)
                return
            }
            provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Runs `body` on the connection's loop after `delay` (for paced bodies and latency).
    public func after(_ delay: TimeAmount, _ body: @escaping @Sendable () -> Void) {
        eventLoop.scheduleTask(in: delay) { body() }
    }

    /// When the client went away before the end: the body bytes written; nil otherwise.
    func abandonedBytes() -> Int? {
        self.state.withLock { $0.ended || $0.brokenByServer ? nil : $0.bodyBytes }
    }

    private func onLoop(_ body: @escaping @Sendable (ChannelHandlerContext) -> Void,
                        otherwise: (@Sendable () -> Void)? = nil) {
        let context = context
        eventLoop.execute { [self] in
            guard !state.withLock({ $0.closed }) else {
                otherwise?()
                return
            }
            body(context.value)
        }
    }
}
