import Foundation
import LineFraming
import NIOCore
import NIOPosix

/// One session with the daemon over its Unix socket: typed calls, answered out of order,
/// and the daemon's notifications.
///
/// Many calls may be in flight at once from many tasks; each gets its own answer, matched
/// by an auto-incrementing integer id. Cancelling the task of a call sends `cancel {id}` to
/// the daemon (so its work stops: a thumbnail transfer is aborted, a search is dropped) and
/// the call throws `CancellationError` at once; the daemon's late `1007` answer is ignored.
/// When the connection breaks, every pending call fails with
/// `ImageCacheClientError.connectionClosed` and never hangs.
///
/// The session's slots and prefetches live as long as this connection (docs/protocol.md, "Sessions"), so a
/// client keeps one connection for as long as its grid is on screen.
public final class ImageCacheConnection: Sendable {
    /// The socket this connection reached.
    public let socketPath: String

    private let channel: any Channel
    private let router: ResponseRouter

    /// The longest line accepted from the daemon. Inline thumbnails are the largest answers
    /// (base64 of an image less than twice the asked width), far below this.
    public static let maxResponseBytes = 64 * 1024 * 1024

    private init(socketPath: String, channel: any Channel, router: ResponseRouter) {
        self.socketPath = socketPath
        self.channel = channel
        self.router = router
    }

    /// A connection dropped without `close()` still closes its socket, so the daemon ends the
    /// session (and its slots) instead of keeping it until the process exits.
    deinit {
        if router.closedError == nil {
            router.close(with: .closedByClient)
            channel.close(promise: nil)
        }
    }

    /// Connects to the daemon at `socketPath`.
    ///
    /// Throws `ImageCacheClientError.daemonNotRunning` (naming the path and how to start the
    /// daemon) when nothing listens there, `.permissionDenied` when this user may not connect.
    public static func connect(
        to socketPath: String,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> ImageCacheConnection {
        let router = ResponseRouter()
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxResponseBytes, overlong: .fail)))
                    try channel.pipeline.syncOperations.addHandler(ResponseHandler(router: router, socketPath: socketPath))
                }
            }
        do {
            let channel = try await bootstrap.connect(unixDomainSocketPath: socketPath).get()
            return ImageCacheConnection(socketPath: socketPath, channel: channel, router: router)
        } catch {
            throw connectError(error, socketPath: socketPath)
        }
    }

    /// Connects to the default socket: the first of `SocketPath.clientCandidates` that
    /// exists (the user daemon's, then the system daemon's), or the first candidate when none
    /// does, so the "not running" message names the path a user daemon would use.
    public static func connect(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> ImageCacheConnection {
        try await connect(to: defaultSocketPath(environment: environment), eventLoopGroup: eventLoopGroup)
    }

    /// The socket a client uses when none is given (see `connect(environment:)`).
    public static func defaultSocketPath(
        environment: [String: String],
        fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) -> String {
        let candidates = SocketPath.clientCandidates(environment: environment)
        return candidates.first(where: fileExists) ?? candidates[0]
    }

    /// Maps a connect failure to a message a person can act on.
    static func connectError(_ error: any Error, socketPath: String) -> ImageCacheClientError {
        if let io = error as? IOError {
            switch io.errnoCode {
            case ENOENT: return .daemonNotRunning(socketPath: socketPath, reason: "no such file")
            case ECONNREFUSED: return .daemonNotRunning(socketPath: socketPath, reason: "connection refused: a stale socket file")
            case EACCES, EPERM: return .permissionDenied(socketPath: socketPath)
            default: return .connectFailed(socketPath: socketPath, reason: String(cString: strerror(io.errnoCode)))
            }
        }
        if let address = error as? SocketAddressError, case .unixDomainSocketPathTooLong = address {
            return .connectFailed(socketPath: socketPath, reason: "the path is longer than a Unix socket address allows")
        }
        return .connectFailed(socketPath: socketPath, reason: String(describing: error))
    }

    // MARK: Calls

    /// Calls `method` with typed params and decodes its typed result.
    ///
    /// Throws the daemon's `RPCError` when it answers an error, `CancellationError` when the
    /// calling task is cancelled, `ImageCacheClientError` when the connection fails.
    public func call<M: RPCMethod>(_ method: M.Type, _ params: M.Params) async throws -> M.Result {
        let line = try await send(method: M.name.rawValue, params: params)
        return try Self.decodeAnswer(M.Result.self, from: line, method: M.name.rawValue)
    }

    /// Calls any method by name with raw params; for tools and tests that speak the protocol
    /// below the typed layer. Typed code uses `call(_:_:)`.
    public func call(method: String, params: JSONValue? = nil) async throws -> JSONValue {
        let line = try await send(method: method, params: params ?? .object([:]))
        return try Self.decodeAnswer(JSONValue.self, from: line, method: method)
    }

    /// Notifications from now on (progress, dimensions, finished and failed events). Each
    /// call makes a new stream, so several consumers each see every notification; subscribe
    /// before the call whose notifications you want. The stream finishes when the connection
    /// closes. Notifications arriving while no stream is open are dropped. A stream buffers
    /// what it has not yet delivered: iterate it, or drop it (which unsubscribes).
    public func notifications() -> AsyncStream<ServerNotification> {
        router.subscribe()
    }

    /// Closes the connection. Pending calls fail with `.closedByClient`; the daemon then
    /// cancels the session's slots and prefetches (downloads go on).
    public func close() async {
        router.close(with: .closedByClient)
        try? await channel.close()
    }

    /// Whether the connection has closed (by either side).
    public var isClosed: Bool { router.closedError != nil }

    // MARK: Plumbing

    /// A request on the wire: params are encoded straight from the typed value.
    private struct Request<Params: Encodable>: Encodable {
        let jsonrpc = "2.0"
        let id: Int
        let method: String
        let params: Params
    }

    /// An answer as it comes back: `result` decoded as the caller's type, or `error`.
    private struct Answer<Result: Decodable>: Decodable {
        let result: Result?
        let error: RPCError?
    }

    private static func decodeAnswer<R: Decodable>(_ type: R.Type, from line: Data, method: String) throws -> R {
        let answer: Answer<R>
        do {
            answer = try JSONDecoder().decode(Answer<R>.self, from: line)
        } catch {
            throw ImageCacheClientError.invalidResponse(method: method, detail: String(describing: error))
        }
        if let error = answer.error { throw error }
        guard let result = answer.result else {
            throw ImageCacheClientError.invalidResponse(method: method, detail: "neither result nor error")
        }
        return result
    }

    private func encodeLine(_ value: some Encodable) throws -> ByteBuffer {
        var buffer = channel.allocator.buffer(bytes: try JSONEncoder().encode(value))
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// Sends one request and waits for the line that answers it.
    ///
    /// Registration and the write run on the event loop, and so does the cancellation
    /// handler's work: the loop orders them, so `cancel {id}` is written only after the request
    /// itself, and a call cancelled before it was sent is never sent.
    private func send<P: Encodable & Sendable>(method: String, params: P) async throws -> Data {
        let id = router.makeID()
        let line = try encodeLine(Request(id: id, method: method, params: params))
        let channel = self.channel
        let router = self.router
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reply: ResponseRouter.Reply) in
                channel.eventLoop.execute {
                    switch router.register(id, reply) {
                    case .registered:
                        channel.writeAndFlush(line).whenFailure { error in router.fail(id: id, with: error) }
                    case .cancelled:
                        reply.resume(throwing: CancellationError())
                    case .closed(let error):
                        reply.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            channel.eventLoop.execute {
                guard let reply = router.abandon(id) else { return }
                reply.resume(throwing: CancellationError())
                let cancelID = router.makeID()
                router.ignoreAnswer(to: cancelID)
                if let cancelLine = try? self.encodeLine(Request(id: cancelID, method: MethodName.cancel.rawValue,
                                                                 params: CancelParams(id: .int(id)))) {
                    channel.writeAndFlush(cancelLine, promise: nil)
                }
            }
        }
    }
}
