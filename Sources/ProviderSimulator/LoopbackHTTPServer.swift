import NIOCore
import NIOHTTP1
import NIOPosix

/// A request as the simulator saw it.
public struct SimulatedRequest: Sendable {
    public var method: String
    /// The path and query exactly as sent (`/search/photos?query=x`).
    public var uri: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// The path without the query.
    public var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }

    /// The value of the first header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// What the simulator answers.
public struct SimulatedResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text answer.
    public static func text(_ text: String, status: Int = 200) -> SimulatedResponse {
        SimulatedResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1, started per test on a free port.
///
/// It exists so that every networked part of imagecached is tested against real sockets
/// and real HTTP, never a mock. Tests, the offline demo and the benchmarks all use it;
/// the provider simulator builds its routes on top of it.
public final class LoopbackHTTPServer: Sendable {
    /// Answers one request; called on a NIO event loop, so it must not block.
    public typealias Handler = @Sendable (SimulatedRequest) -> SimulatedResponse
    /// Answers one request by writing through the writer, at its own pace; called on a NIO
    /// event loop, so it must not block (schedule later writes with `writer.after`).
    public typealias StreamingHandler = @Sendable (SimulatedRequest, ResponseWriter) -> Void

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// The port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:PORT`, the base of every URL this server serves.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts listening on 127.0.0.1 at a free port chosen by the kernel.
    public convenience init(handler: @escaping Handler) async throws {
        try await self.init(streaming: { request, writer in writer.respond(handler(request)) })
    }

    /// Starts listening with a handler that writes its response over time through a
    /// `ResponseWriter` (slow, stalled, endless or broken bodies). `onAbort` is told of every
    /// request whose connection closed before its response ended (the client gave up), with
    /// the body bytes already written, so tests can see that a cancelled transfer stopped.
    public init(streaming handler: @escaping StreamingHandler,
                onAbort: (@Sendable (SimulatedRequest, Int) -> Void)? = nil) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 256)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(HTTPHandler(handler: handler, onAbort: onAbort))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            self.group = group
            self.channel = channel
            self.port = channel.localAddress?.port ?? 0
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

private final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let handler: LoopbackHTTPServer.StreamingHandler
    private let onAbort: (@Sendable (SimulatedRequest, Int) -> Void)?
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var current: ResponseWriter?

    init(handler: @escaping LoopbackHTTPServer.StreamingHandler, onAbort: (@Sendable (SimulatedRequest, Int) -> Void)?) {
        self.handler = handler
        self.onAbort = onAbort
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            let request = SimulatedRequest(
                method: head.method.rawValue, uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) }, body: body)
            let writer = ResponseWriter(context: context, request: request, keepAlive: head.isKeepAlive)
            current = writer
            handler(request, writer)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let current, let written = current.abandonedBytes() {
            onAbort?(current.request, written)
        }
        current = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
