#if canImport(Glibc)
import Glibc
#endif
import ImageCacheConfig
import ImageCacheKit
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// `GET /metrics` over HTTP/1.1 on `[daemon] metrics_listen` (TCP or a Unix socket), on the
/// daemon's own event loops.
///
/// Deliberately small: one path, one method (HEAD too), one answer per connection (then
/// `Connection: close`, which every scraper handles), nothing else (404 for another path,
/// 405 for another method). Request heads are bounded by NIO's HTTP parser; bodies are
/// ignored. The answer is always the Prometheus text format 0.0.4: swift-prometheus 2.4
/// renders no OpenMetrics, and a scraper that asks for OpenMetrics in `Accept` falls back to
/// the text format by the protocol's own negotiation. No authentication: the documented
/// places are loopback or a Unix socket in a folder whose permissions decide who reads.
public final class MetricsEndpoint: Sendable {
    /// The content type of every answer of `/metrics`.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let channel: any Channel
    private let address: MetricsListenAddress

    private init(channel: any Channel, address: MetricsListenAddress) {
        self.channel = channel
        self.address = address
    }

    /// Where it listens: for TCP the port the kernel chose when the configuration said 0.
    public var boundAddress: MetricsListenAddress {
        guard case .tcp(let host, _) = address, let port = channel.localAddress?.port else { return address }
        return .tcp(host: host, port: port)
    }

    /// Binds `address` and serves `metrics` until `close()`.
    /// - Throws: `DaemonStartError.metricsUnavailable` when the address cannot be bound.
    public static func start(_ address: MetricsListenAddress, metrics: DaemonMetrics, group: any EventLoopGroup,
                             logger: Logger) async throws(DaemonStartError) -> MetricsEndpoint {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(MetricsRequestHandler(metrics: metrics))
                }
            }
        do {
            let channel: any Channel
            switch address {
            case .tcp(let host, let port):
                channel = try await bootstrap.bind(host: host, port: port).get()
            case .unix(let path):
                // A socket left by an earlier run is replaced; anything else at the path is not.
                channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            }
            let endpoint = MetricsEndpoint(channel: channel, address: address)
            logger.notice("serving metrics", metadata: ["metrics_listen": "\(endpoint.boundAddress)"])
            return endpoint
        } catch {
            throw .metricsUnavailable(address: address.description, reason: bindFailure(error, address: address))
        }
    }

    /// What failed, in words: NIO describes a failed bind by the call
    /// (`bind(descriptor:ptr:bytes:)`), which tells an operator nothing; the errno's text and
    /// the address do ("cannot bind 127.0.0.1:9464: Address already in use").
    static func bindFailure(_ error: any Error, address: MetricsListenAddress) -> String {
        if let io = error as? IOError {
            return "cannot bind \(address): \(String(cString: strerror(io.errnoCode)))"
        }
        if case .unknown(let host, _)? = error as? SocketAddressError {
            return "cannot resolve \(host) to an address of this host"
        }
        return "cannot bind \(address): \(error)"
    }

    /// Stops listening (a scrape in progress finishes) and removes a Unix socket file.
    public func close() async {
        try? await channel.close()
        if case .unix(let path) = address { unlink(path) }
    }
}

/// One HTTP connection of the metrics endpoint: answers the first request, then closes.
private final class MetricsRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let metrics: DaemonMetrics
    private var head: HTTPRequestHead?
    private var answered = false

    init(metrics: DaemonMetrics) {
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head, !answered else { return }
            answered = true
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? head.uri
        let version = head.version
        let channel = context.channel
        guard path == "/metrics" else {
            Self.send(status: .notFound, body: Array("not found: the metrics are at /metrics\n".utf8), version: version,
                      headOnly: false, on: channel)
            return
        }
        guard head.method == .GET || head.method == .HEAD else {
            Self.send(status: .methodNotAllowed, body: Array("only GET /metrics\n".utf8), version: version, headOnly: false,
                      extra: [("Allow", "GET, HEAD")], on: channel)
            return
        }
        Self.scrape(metrics, version: version, headOnly: head.method == .HEAD, on: channel)
    }

    /// Reads the figures (downloads are an actor's: the scrape awaits) off the event loop,
    /// then answers.
    private static func scrape(_ metrics: DaemonMetrics, version: HTTPVersion, headOnly: Bool, on channel: any Channel) {
        Task {
            let body = await metrics.scrape()
            send(status: .ok, body: body, version: version, headOnly: headOnly, contentType: MetricsEndpoint.contentType, on: channel)
        }
    }

    /// Writes one whole answer through the channel's pipeline (safe from any thread) and closes.
    private static func send(status: HTTPResponseStatus, body: [UInt8], version: HTTPVersion, headOnly: Bool,
                             contentType: String = "text/plain; charset=utf-8", extra: [(String, String)] = [],
                             on channel: any Channel) {
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", String(body.count)), ("Connection", "close")])
        for (name, value) in extra { headers.add(name: name, value: value) }
        let buffer = channel.allocator.buffer(bytes: body)
        channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: status, headers: headers)),
                      promise: nil)
        if !headOnly { channel.write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil) }
        channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
