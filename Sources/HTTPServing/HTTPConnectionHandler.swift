import NIOCore
import NIOHTTP1

/// One connection of an `HTTPServer`, behind NIO's HTTP/1 server pipeline (which parses,
/// answers malformed requests with 400, and holds a pipelined request back until the response
/// before it has ended, so this handler sees one request at a time).
///
/// It collects a request's head and body, refusing with 413 (then closing) a body longer than
/// the server's limit, decided from `Content-Length` before any of the body is read and
/// checked again as a chunked body arrives; then hands the request and a writer to the
/// server's handler.
final class HTTPConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Reading {
        /// Between requests.
        case idle
        /// A head received; its body so far (nil until a piece arrives).
        case collecting(HTTPRequestHead, ByteBuffer?)
        /// The connection ends after the response in progress (a refusal, or no keep-alive):
        /// everything until the close is dropped, a pipelined request included.
        case closing
    }

    /// Its name in the pipeline, by which an upgrade removes it.
    static let name = "HTTPServing.connection"

    private let server: HTTPServer.Shared
    private var reading = Reading.idle
    /// The writer of the response in progress (or last ended).
    private var current: HTTPResponseWriter?

    init(server: HTTPServer.Shared) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard case .idle = reading else { return }
            if let declared = head.headers.first(name: "Content-Length").flatMap(Int.init), declared > server.maxBodyBytes {
                refuse(head, context: context)
                return
            }
            reading = .collecting(head, nil)
        case .body(var piece):
            guard case .collecting(let head, var body) = reading else { return }
            reading = .idle   // the body is uniquely referenced while it grows
            if piece.readableBytes > server.maxBodyBytes - (body?.readableBytes ?? 0) {
                refuse(head, context: context)
                return
            }
            if body == nil { body = piece } else { body!.writeBuffer(&piece) }
            reading = .collecting(head, body)
        case .end:
            guard case .collecting(let head, let body) = reading else { return }
            let keepAlive = server.keepAlive && head.isKeepAlive
            reading = keepAlive ? .idle : .closing
            let request = HTTPServerRequest(head: head, body: body ?? ByteBuffer())
            let writer = HTTPResponseWriter(context: context, request: request, keepAlive: keepAlive)
            current = writer
            server.handler(request, writer)
        }
    }

    /// 413 and close: the body is not read, so nothing the client sends can make it grow.
    private func refuse(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        reading = .closing
        let text = "request body too large: at most \(server.maxBodyBytes) bytes\n"
        let headers: HTTPHeaders = [
            "Content-Type": "text/plain; charset=utf-8", "Content-Length": String(text.utf8.count), "Connection": "close",
        ]
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .payloadTooLarge, headers: headers))),
                      promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let current, let written = current.connectionClosed() {
            server.onAbandoned?(current.request, written)
        }
        current = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is UpgradeDeclined { return }   // the request comes next, as plain HTTP
        context.close(promise: nil)
    }
}
