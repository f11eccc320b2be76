#if canImport(Glibc)
import ImageCacheKit
import Glibc
#endif
import LineFraming
import Logging
import NIOCore
import NIOPosix

/// The JSON-RPC server on a listening Unix socket: framing, sessions, dispatch, slow-reader
/// policy. It knows nothing of configuration files, signals or systemd — `ImageCacheDaemon`
/// assembles those around it — so tests can run it in-process on a temporary socket.
///
/// Each connection's pipeline is `OutboundLimiter → LineFrameDecoder → ConnectionHandler`:
/// bytes are split into bounded lines, lines become dispatched tasks, and every answer goes
/// back through the limiter.
public final class RPCServer: Sendable {
    /// What the server has done, for tests and operators.
    public let metrics = ServerMetrics()

    private let router: RPCRouter
    private let limits: @Sendable () -> ServerLimits
    private let logger: Logger
    private let group: any EventLoopGroup
    private let registry = SessionRegistry()
    private let serverChannel = LockedState<(any Channel)?>(nil)
    private let observer: RequestObserver?

    /// - Parameters:
    ///   - router: the methods to serve.
    ///   - limits: read for each new connection and each new request, so a reloaded
    ///     configuration applies without a restart.
    ///   - logger: the daemon's logger; sessions add their id to it.
    ///   - group: the event loops that run the connections.
    ///   - observer: told of each request's method, outcome and start (the daemon's metrics).
    public init(router: RPCRouter, limits: @escaping @Sendable () -> ServerLimits, logger: Logger,
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, observer: RequestObserver? = nil) {
        self.observer = observer
        self.router = router
        self.limits = limits
        self.logger = logger
        self.group = group
    }

    /// The accept queue's length: connections the kernel holds until the server accepts them.
    static let backlog: Int32 = 1024

    /// The number of connected clients now.
    public var sessionCount: Int { registry.count }

    /// Returns once at most `limit` clients are connected: lets a caller wait for
    /// disconnections to be processed instead of guessing how long they take.
    public func waitUntilSessionCount(atMost limit: Int) async {
        await registry.waitUntilCount(atMost: limit)
    }

    /// Starts serving on an already bound socket (ours from `SocketBinder`, or systemd's).
    /// NIO makes it non-blocking and listens on it. Returns once it accepts connections.
    public func start(on listener: ListeningSocket) async throws {
        let dispatcher = Dispatcher(router: router, limits: limits, registry: registry, observer: observer)
        let registry = self.registry
        let limits = self.limits
        let metrics = self.metrics
        let logger = self.logger
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                // At the open-file limit accept() fails while the client waits in the backlog:
                // pause accepting rather than retry in a loop (100 % CPU while idle).
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptPause(metrics: metrics, logger: logger))
                }
            }
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let current = limits()
                    let peer = PeerCredentials.read(from: channel)
                    let session = Session(id: registry.makeID(), peer: peer, channel: channel, logger: logger)
                    registry.add(session)
                    metrics.accepted()
                    // logfmt keys of their own (peer_pid=, not peer=pid=…) so a line parses.
                    session.logger.info("client connected", metadata: peer.map {
                        ["peer_pid": "\($0.pid)", "peer_uid": "\($0.uid)", "peer_gid": "\($0.gid)",
                         "peer_groups": "\($0.groupsRead ? $0.groups.map(String.init).joined(separator: ",") : "unknown")"]
                    } ?? ["peer": "unknown"])
                    session.onClose { [session] in
                        session.logger.info("client disconnected")
                    }
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(OutboundLimiter(limits: current, metrics: metrics, logger: session.logger))
                    try sync.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineBytes: current.maxRequestBytes, overlong: .discardRest)))
                    try sync.addHandler(ConnectionHandler(session: session, dispatcher: dispatcher, maxRequestBytes: current.maxRequestBytes))
                }
            }
        let channel = try await bootstrap.withBoundSocket(listener.descriptor).get()
        // NIO listens on a bound socket with its default backlog (128) and ignores the
        // backlog option there; a burst of clients (or systemd's Backlog=) deserves more.
        _ = listen(listener.descriptor, Self.backlog)
        serverChannel.withLock { $0 = channel }
    }

    /// Stops accepting, lets pending requests finish for up to `gracePeriod` (new requests
    /// meanwhile get 1012 "shutting down"), then closes every connection, which cancels
    /// whatever is still running.
    public func shutdown(gracePeriod: Duration) async {
        let channel = serverChannel.withLock { channel -> (any Channel)? in
            defer { channel = nil }
            return channel
        }
        try? await channel?.close()
        let sessions = registry.all
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { drains in
                    for session in sessions { drains.addTask { await session.drain() } }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: gracePeriod)
                return false
            }
            let drained = await group.next() ?? true
            group.cancelAll()
            if !drained {
                logger.notice("grace period over; abandoning the requests still running")
                // Closing ends each session, which cancels its tasks and releases its drain.
                for session in sessions { session.channel.close(promise: nil) }
            }
        }
        for session in registry.all {
            try? await session.channel.close()
        }
    }
}
