import HTTPServing
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// `imagecache gallery`'s web server: the page, a WebSocket per browser tab relaying
/// JSON-RPC lines to its own daemon session, and the delivered thumbnails, on 127.0.0.1 only.
///
/// The browser is a client of the daemon like any other: each tab's WebSocket is one Unix
/// socket connection (`DaemonRelay`), so its slots, cancellations and pending searches mean
/// what they mean on the socket, and end when the tab closes. Every request passes
/// `RequestGuard` (token, `Host`, `Origin`) first; images come only from `DeliveredPaths`.
public final class GalleryServer: Sendable {
    /// What to serve and where.
    public struct Configuration: Sendable {
        /// The daemon's socket each tab connects to.
        public var socketPath: String
        /// The TCP port on 127.0.0.1 (0: a free one).
        public var port: Int
        /// The URL's secret (random unless a test fixes it).
        public var token: GalleryToken

        /// A configuration for the daemon at `socketPath`.
        public init(socketPath: String, port: Int = 0, token: GalleryToken = GalleryToken()) {
            self.socketPath = socketPath
            self.port = port
            self.token = token
        }
    }

    /// The port it listens on.
    public let port: Int
    /// The token in its URL.
    public let token: GalleryToken
    /// The paths it may serve.
    public let delivered: DeliveredPaths
    private let server: HTTPServer

    /// The page's address: `http://127.0.0.1:PORT/TOKEN/`.
    public var url: String { "http://127.0.0.1:\(port)/\(token.text)/" }

    private init(server: HTTPServer, token: GalleryToken, delivered: DeliveredPaths) {
        self.server = server
        port = server.port
        self.token = token
        self.delivered = delivered
    }

    /// Binds 127.0.0.1 and starts serving. Throws when the port is taken.
    public static func start(_ configuration: Configuration,
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> GalleryServer {
        let delivered = DeliveredPaths()
        // The port is known only after binding (port 0), and the guard needs it: it is read
        // through a box filled in before the port is handed out.
        let guardBox = GuardBox()
        let relay = DaemonRelay.Factory(socketPath: configuration.socketPath, delivered: delivered, group: group)
        let settings = HTTPServer.Configuration(address: .tcp(host: "127.0.0.1", port: configuration.port),
                                                maxBodyBytes: GalleryHTTP.maxBodyBytes,
                                                upgraders: [webSocketUpgrader(guardBox: guardBox, relay: relay)])
        let server = try await HTTPServer.start(settings, group: group, respondingAsync: { request in
            guard let requestGuard = guardBox.value else {
                return GalleryHTTP.finished(.text("starting: reload in a moment", status: .serviceUnavailable))
            }
            return await GalleryHTTP(requestGuard: requestGuard, delivered: delivered).response(to: request.head)
        })
        guardBox.set(RequestGuard(token: configuration.token, port: server.port))
        return GalleryServer(server: server, token: configuration.token, delivered: delivered)
    }

    /// Stops accepting and closes every connection (tabs see their WebSocket close).
    public func shutdown() async {
        await server.shutdown(force: true)
    }

    /// Serves until the task is cancelled (Ctrl-C in the CLI), then shuts down.
    public func runUntilCancelled() async {
        await server.waitUntilShutdown()
        await shutdown()
    }

    /// The WebSocket upgrade, which only a request passing the guard gets (another is
    /// answered by `GalleryHTTP`: 403). An upgraded connection is one tab's relay.
    private static func webSocketUpgrader(guardBox: GuardBox, relay: DaemonRelay.Factory) -> NIOWebSocketServerUpgrader {
        NIOWebSocketServerUpgrader(
            maxFrameSize: DaemonRelay.maxFrameBytes,
            shouldUpgrade: { channel, head in
                guard let requestGuard = guardBox.value, requestGuard.check(head) == .allowed(.webSocket) else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 1024,
                                                    maxAccumulatedFrameSize: DaemonRelay.maxFrameBytes))
                    let webSocket = try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel)
                    Task { await relay.run(webSocket) }
                }
            })
    }
}

/// The guard, set once the port is known (before any connection is served).
final class GuardBox: Sendable {
    private let box = NIOLockedValueBox<RequestGuard?>(nil)
    var value: RequestGuard? { box.withLockedValue { $0 } }
    func set(_ requestGuard: RequestGuard) { box.withLockedValue { $0 = requestGuard } }
}
