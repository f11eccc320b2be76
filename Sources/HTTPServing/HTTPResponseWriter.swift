#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Writes the response to one request: whole (`respond`), or over time — a head, body pieces,
/// an end — or with a broken ending (a close mid-body, a reset).
///
/// The piecewise calls are what let the provider simulator serve slow, stalled, endless and
/// broken bodies to the clients under test; every server of the package writes through this
/// one type so that keep-alive, `HEAD` and the abandoned-response count have one rule.
/// Safe from any thread: every write hops onto the connection's event loop, in call order.
public final class HTTPResponseWriter: Sendable {
    /// The request this writer answers.
    public let request: HTTPServerRequest
    private let context: NIOLoopBound<ChannelHandlerContext>
    private let eventLoop: any EventLoop
    private let keepAlive: Bool
    private let state = NIOLockedValueBox(State())

    private struct State {
        var bodyBytes = 0
        var ended = false
        var brokenByServer = false
        var closed = false
    }

    /// `keepAlive` false: the response says `Connection: close` and its end closes the connection.
    init(context: ChannelHandlerContext, request: HTTPServerRequest, keepAlive: Bool) {
        self.context = NIOLoopBound(context, eventLoop: context.eventLoop)
        eventLoop = context.eventLoop
        self.request = request
        self.keepAlive = keepAlive
    }

    /// False once the connection is closed (by either side): a streaming loop stops here.
    public var isOpen: Bool { state.withLockedValue { !$0.closed } }

    /// Body bytes written so far.
    public var bytesWritten: Int { state.withLockedValue { $0.bodyBytes } }

    /// A whole response in one hop to the event loop: `Content-Length` added when missing, the
    /// body left out for `HEAD`.
    public func respond(_ response: HTTPServerResponse) {
        var headers = response.headers
        if !headers.contains(name: "Content-Length") {
            headers.add(name: "Content-Length", value: String(response.body.readableBytes))
        }
        let head = self.head(response.status, headers)
        let body = request.head.method == .HEAD || response.body.readableBytes == 0 ? nil : response.body
        onLoop { context in
            context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
            if let body {
                self.state.withLockedValue { $0.bodyBytes += body.readableBytes }
                context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
            }
            self.finish(context)
        }
    }

    /// The status line and headers. Without `Content-Length` the body is sent chunked.
    public func writeHead(status: HTTPResponseStatus, headers: HTTPHeaders) {
        let head = self.head(status, headers)
        onLoop { context in
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        }
    }

    /// A piece of body. The future completes when it is handed to the socket, so a loop that
    /// waits for it never buffers more than one piece (backpressure for huge bodies).
    @discardableResult
    public func write(_ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        onLoop { context in
            self.state.withLockedValue { $0.bodyBytes += buffer.readableBytes }
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(buffer))), promise: promise)
        } otherwise: {
            promise.fail(ChannelError.ioOnClosedChannel)
        }
        return promise.futureResult
    }

    /// Ends the response; the connection stays open for the next request when keep-alive.
    public func end() {
        onLoop { context in self.finish(context) }
    }

    /// Closes the connection mid-response with a FIN: a truncated body.
    public func closeAbruptly() {
        onLoop { context in
            self.state.withLockedValue { $0.brokenByServer = true }
            context.close(promise: nil)
        }
    }

    /// Resets the connection (SO_LINGER 0, so the close sends an RST): a connection reset.
    public func reset() {
        onLoop { context in
            self.state.withLockedValue { $0.brokenByServer = true }
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

    // MARK: For the connection handler

    /// The connection closed: later writes are dropped (their futures fail). Returns the body
    /// bytes written when the response had not ended (the client went away), nil otherwise.
    func connectionClosed() -> Int? {
        state.withLockedValue {
            $0.closed = true
            return $0.ended || $0.brokenByServer ? nil : $0.bodyBytes
        }
    }

    // MARK: Writing

    private func head(_ status: HTTPResponseStatus, _ headers: HTTPHeaders) -> HTTPResponseHead {
        var headers = headers
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        return HTTPResponseHead(version: request.head.version, status: status, headers: headers)
    }

    /// Writes the end (on the loop) and, without keep-alive, closes once it is sent.
    private func finish(_ context: ChannelHandlerContext) {
        state.withLockedValue { $0.ended = true }
        let done = context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private func onLoop(_ body: @escaping @Sendable (ChannelHandlerContext) -> Void,
                        otherwise: (@Sendable () -> Void)? = nil) {
        let context = context
        eventLoop.execute { [self] in
            guard !state.withLockedValue({ $0.closed }) else {
                otherwise?()
                return
            }
            body(context.value)
        }
    }
}
