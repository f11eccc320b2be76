#if canImport(Glibc)
import Glibc
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server: it binds, runs NIO's HTTP/1 pipeline, collects each request within a
/// body limit, hands it to a handler with an `HTTPResponseWriter`, keeps connections alive or
/// not as configured, and shuts down in order.
///
/// The package's HTTP servers (the daemon's metrics endpoint, the provider simulator that
/// tests, the demo and the benchmarks fetch from) differ only in what they answer; this type
/// holds the rest once, so that a bind error, a body limit or a shutdown behaves the same in all.
package final class HTTPServer: Sendable {
    /// What every connection needs from its server.
    package struct Configuration: Sendable {
        /// Where to listen.
        package var address: HTTPListenAddress
        /// The longest request body read; a longer one is answered 413 and its connection closed.
        package var maxBodyBytes: Int
        /// False: one response per connection, with `Connection: close`. True: as the client asks.
        package var keepAlive: Bool
        /// The upgrade hook: protocols a request may switch its connection to (a WebSocket).
        /// The server's own handler leaves the connection when an upgrade completes, so the
        /// upgrader's handlers alone read what follows; a request whose upgrade is declined
        /// (its upgrader fails `buildUpgradeResponse`) reaches the handler as any other.
        package var upgraders: [any HTTPServerProtocolUpgrader & Sendable]

        /// A configuration for `address`.
        package init(address: HTTPListenAddress = .loopbackAnyPort, maxBodyBytes: Int = 1 << 20, keepAlive: Bool = true,
                     upgraders: [any HTTPServerProtocolUpgrader & Sendable] = []) {
            self.address = address
            self.maxBodyBytes = max(0, maxBodyBytes)
            self.keepAlive = keepAlive
            self.upgraders = upgraders
        }
    }

    /// Answers one request by writing through the writer, at its own pace. Called on the
    /// connection's event loop, so it must not block (later writes go through `writer.after`,
    /// or from any thread).
    package typealias Handler = @Sendable (HTTPServerRequest, HTTPResponseWriter) -> Void
    /// Told of a request whose connection closed before its response ended (the client gave
    /// up), with the body bytes already written.
    package typealias AbandonedHandler = @Sendable (HTTPServerRequest, Int) -> Void

    /// What every connection handler reads.
    struct Shared: Sendable {
        let handler: Handler
        let onAbandoned: AbandonedHandler?
        let maxBodyBytes: Int
        let keepAlive: Bool
    }

    private let listener: any Channel
    private let connections: ConnectionSet
    /// The event loops this server made for itself (nil when they were given), stopped last.
    private let ownGroup: MultiThreadedEventLoopGroup?
    private let address: HTTPListenAddress

    private init(listener: any Channel, connections: ConnectionSet, ownGroup: MultiThreadedEventLoopGroup?,
                 address: HTTPListenAddress) {
        self.listener = listener
        self.connections = connections
        self.ownGroup = ownGroup
        self.address = address
    }

    /// Binds and starts serving with a handler that writes through the writer.
    /// - Parameters:
    ///   - group: the event loops to serve on; nil makes one loop this server owns and stops.
    ///   - onAbandoned: told of each response its client walked away from.
    /// - Throws: `HTTPBindError` naming the address when it cannot be bound.
    package static func start(_ configuration: Configuration, group: (any EventLoopGroup)? = nil,
                              onAbandoned: AbandonedHandler? = nil,
                              handler: @escaping Handler) async throws(HTTPBindError) -> HTTPServer {
        let loops: any EventLoopGroup
        let ownGroup: MultiThreadedEventLoopGroup?
        if let group {
            (loops, ownGroup) = (group, nil)
        } else {
            let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            (loops, ownGroup) = (made, made)
        }
        let shared = Shared(handler: handler, onAbandoned: onAbandoned, maxBodyBytes: configuration.maxBodyBytes,
                            keepAlive: configuration.keepAlive)
        let connections = ConnectionSet()
        let upgraders = configuration.upgraders
        let bootstrap = ServerBootstrap(group: loops)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: upgradeConfiguration(upgraders),
                                                                                   withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(HTTPConnectionHandler(server: shared), name: HTTPConnectionHandler.name)
                    connections.insert(channel)
                }
            }
        do {
            let listener: any Channel
            switch configuration.address {
            case .tcp(let host, let port):
                listener = try await bootstrap.bind(host: host, port: port).get()
            case .unix(let path):
                // A socket left by an earlier run is replaced; anything else at the path is not.
                listener = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            }
            return HTTPServer(listener: listener, connections: connections, ownGroup: ownGroup, address: configuration.address)
        } catch {
            try? await ownGroup?.shutdownGracefully()
            throw HTTPBindError(error, address: configuration.address)
        }
    }

    /// The upgrade hook's pipeline setting: nil without upgraders; with them, the server's own
    /// handler leaves a connection as its upgrade completes (NIO calls this before the
    /// upgrader adds its handlers, so none of the new protocol's data reaches it).
    private static func upgradeConfiguration(_ upgraders: [any HTTPServerProtocolUpgrader & Sendable])
        -> NIOHTTPServerUpgradeConfiguration? {
        guard !upgraders.isEmpty else { return nil }
        let completion: @Sendable (ChannelHandlerContext) -> Void = { context in
            context.pipeline.syncOperations.removeHandler(name: HTTPConnectionHandler.name, promise: nil)
        }
        let list: [any HTTPServerProtocolUpgrader] = upgraders.map { DeclinableUpgrader(inner: $0) }
        return (upgraders: list, completionHandler: completion)
    }

    /// Binds and serves with a handler that returns the whole response, on the event loop.
    package static func start(_ configuration: Configuration, group: (any EventLoopGroup)? = nil,
                              responding: @escaping @Sendable (HTTPServerRequest) -> HTTPServerResponse)
        async throws(HTTPBindError) -> HTTPServer {
        try await start(configuration, group: group) { request, writer in writer.respond(responding(request)) }
    }

    /// Binds and serves with a handler that may suspend (it runs in a task of its own, off the
    /// event loop) and returns the whole response.
    package static func start(_ configuration: Configuration, group: (any EventLoopGroup)? = nil,
                              respondingAsync: @escaping @Sendable (HTTPServerRequest) async -> HTTPServerResponse)
        async throws(HTTPBindError) -> HTTPServer {
        try await start(configuration, group: group) { request, writer in
            Task { writer.respond(await respondingAsync(request)) }
        }
    }

    /// Where it listens: for TCP the port the kernel chose when the address said 0.
    package var boundAddress: HTTPListenAddress {
        guard case .tcp(let host, _) = address, let port = listener.localAddress?.port else { return address }
        return .tcp(host: host, port: port)
    }

    /// The TCP port it listens on (0 for a Unix socket).
    package var port: Int { listener.localAddress?.port ?? 0 }

    /// Stops accepting; closes idle connections at once and the others as soon as their
    /// current response ends (`force`: every connection now, an upgraded one included);
    /// removes a Unix socket it bound. A server that made its own event loops then stops them,
    /// which closes whatever is still open (an endless body, a stalled one), so that it leaves
    /// nothing running. A second call does nothing more.
    package func shutdown(force: Bool = false) async {
        guard connections.stop(force: force) else { return }
        try? await listener.close()
        if case .unix(let path) = address { unlink(path) }
        try? await ownGroup?.shutdownGracefully()
    }

    /// Returns once the server stops listening (`shutdown`), or at once when the task is
    /// cancelled: what a command that serves until Ctrl-C waits on.
    package func waitUntilShutdown() async {
        let closed = listener.closeFuture
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                closed.whenComplete { _ in done.resume() }
            }
        } onCancel: {
            listener.close(promise: nil)
        }
    }
}

/// The open connections of one server, so that a shutdown reaches them.
private final class ConnectionSet: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var stopping = false
    }

    private let state = NIOLockedValueBox(State())

    /// Tracks `channel` until it closes; one accepted during a shutdown is closed at once.
    func insert(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let stopping = state.withLockedValue { s -> Bool in
            if !s.stopping { s.open[id] = channel }
            return s.stopping
        }
        if stopping {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.state.withLockedValue { $0.open.removeValue(forKey: id) }
        }
    }

    /// Asks every connection to finish — NIO's HTTP pipeline closes an idle one now, and one
    /// with a response in progress once that response ends — or, with `force`, closes each
    /// now. False when a shutdown already began (a connection is asked once: NIO's pipeline
    /// does not expect a second request to quiesce).
    func stop(force: Bool) -> Bool {
        let open = state.withLockedValue { s -> [any Channel]? in
            if s.stopping { return nil }
            s.stopping = true
            return Array(s.open.values)
        }
        guard let open else { return false }
        for channel in open {
            if force {
                channel.close(promise: nil)
            } else {
                channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            }
        }
        return true
    }
}
