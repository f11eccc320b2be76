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

    enum Connection {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, RefusedUpgrade)
    }

    /// The port it listens on.
    public let port: Int
    /// The token in its URL.
    public let token: GalleryToken
    /// The paths it may serve.
    public let delivered: DeliveredPaths
    private let serverChannel: any Channel
    private let acceptLoop: Task<Void, Never>

    /// The page's address: `http://127.0.0.1:PORT/TOKEN/`.
    public var url: String { "http://127.0.0.1:\(port)/\(token.text)/" }

    private init(port: Int, token: GalleryToken, delivered: DeliveredPaths, serverChannel: any Channel, acceptLoop: Task<Void, Never>) {
        self.port = port
        self.token = token
        self.delivered = delivered
        self.serverChannel = serverChannel
        self.acceptLoop = acceptLoop
    }

    /// Binds 127.0.0.1 and starts serving. Throws when the port is taken.
    public static func start(_ configuration: Configuration,
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> GalleryServer {
        let delivered = DeliveredPaths()
        // The port is known only after binding (port 0), and the upgrade check needs it: the
        // guard is read through a box filled in before the first connection can be accepted.
        let guardBox = GuardBox()
        let listener: NIOAsyncChannel<EventLoopFuture<Connection>, Never> = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: "127.0.0.1", port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configure(channel, guardBox: guardBox)
                }
            }
        guard let port = listener.channel.localAddress?.port else {
            try? await listener.channel.close()
            throw ChannelError.unknownLocalAddress
        }
        let requestGuard = RequestGuard(token: configuration.token, port: port)
        guardBox.set(requestGuard)
        let http = GalleryHTTP(requestGuard: requestGuard, delivered: delivered)
        let relay = DaemonRelay.Factory(socketPath: configuration.socketPath, delivered: delivered, group: group)
        let loop = Task<Void, Never> {
            try? await withThrowingDiscardingTaskGroup { tasks in
                try await listener.executeThenClose { inbound in
                    for try await negotiated in inbound {
                        tasks.addTask {
                            switch try? await negotiated.get() {
                            case .webSocket(let channel): await relay.run(channel)
                            case .http(let channel, let refused): await http.serve(channel, refusedUpgrade: refused)
                            case nil: break
                            }
                        }
                    }
                }
            }
        }
        return GalleryServer(port: port, token: configuration.token, delivered: delivered, serverChannel: listener.channel, acceptLoop: loop)
    }

    /// Stops accepting and closes every connection (tabs see their WebSocket close).
    public func shutdown() async {
        try? await serverChannel.close()
        acceptLoop.cancel()
        await acceptLoop.value
    }

    /// Serves until the task is cancelled (Ctrl-C in the CLI), then shuts down.
    public func runUntilCancelled() async {
        await withTaskCancellationHandler {
            await acceptLoop.value
        } onCancel: {
            serverChannel.close(promise: nil)
            acceptLoop.cancel()
        }
    }

    /// The HTTP/1 pipeline with a WebSocket upgrade that only a request passing the guard gets.
    private static func configure(_ channel: any Channel, guardBox: GuardBox) throws -> EventLoopFuture<Connection> {
        let refused = RefusedUpgrade()
        let upgrader = NIOTypedWebSocketServerUpgrader<Connection>(
            maxFrameSize: DaemonRelay.maxFrameBytes,
            shouldUpgrade: { channel, head in
                guard let requestGuard = guardBox.value, requestGuard.check(head) == .allowed(.webSocket) else {
                    refused.keep(head)
                    return channel.eventLoop.makeSucceededFuture(nil)   // not upgraded: GalleryHTTP answers 403
                }
                return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 1024,
                                                    maxAccumulatedFrameSize: DaemonRelay.maxFrameBytes))
                    return Connection.webSocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                }
            })
        let configuration = NIOTypedHTTPServerUpgradeConfiguration(
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in
                channel.eventLoop.makeCompletedFuture {
                    return Connection.http(try NIOAsyncChannel(wrappingChannelSynchronously: channel), refused)
                }
            })
        return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
            configuration: .init(upgradeConfiguration: configuration))
    }
}

/// The guard, set once the port is known (before any connection is served).
final class GuardBox: Sendable {
    private let box = NIOLockedValueBox<RequestGuard?>(nil)
    var value: RequestGuard? { box.withLockedValue { $0 } }
    func set(_ requestGuard: RequestGuard) { box.withLockedValue { $0 = requestGuard } }
}
