import Logging
import NIOCore

/// Validates a line, admits it against the session's caps and runs its handler: the one
/// path from bytes to exactly one answer.
final class Dispatcher: Sendable {
    let router: RPCRouter
    let limits: @Sendable () -> ServerLimits
    let registry: SessionRegistry
    /// Told of every request's outcome (`ok` or its error kind) and start, once, when its
    /// answer is decided: the metrics endpoint's requests and latencies.
    let observer: RequestObserver?

    init(router: RPCRouter, limits: @escaping @Sendable () -> ServerLimits, registry: SessionRegistry,
         observer: RequestObserver? = nil) {
        self.router = router
        self.limits = limits
        self.registry = registry
        self.observer = observer
    }

    /// The label under which a request is counted: its method when the router has it, a fixed
    /// word otherwise, so that a client cannot mint label values (series) at will.
    static let unroutedMethod = "unknown"

    func sessionEnded(_ session: Session) {
        registry.remove(session)
    }

    func handle(line: ByteBuffer, session: Session) {
        let started = ContinuousClock.now
        // A plain request for a scannable route goes from bytes to typed params in one pass.
        if let scanned = line.withUnsafeReadableBytes({ router.scan($0) }), case .ordered(_, let run) = scanned.route.body {
            startTask(run, arrival: { _, context in try scanned.arrive(context) }, options: scanned.route.options,
                      method: scanned.method, id: scanned.id, params: nil, session: session, started: started)
            return
        }
        guard let parsed = IncomingMessageParser.parse(line) else { return }
        switch parsed {
        case .failure(let failure):
            session.logger.debug("invalid request", metadata: ["error": "\(failure.error)"])
            observer?(Self.unroutedMethod, failure.error.kind.rawValue, started)
            session.send(MessageEncoder.failure(id: failure.id, error: failure.error))
        case .success(.request(let id, let method, let params)):
            guard let route = router.route(for: method) else {
                observer?(Self.unroutedMethod, ErrorKind.methodNotFound.rawValue, started)
                session.send(MessageEncoder.failure(id: id, error: RPCError(.methodNotFound, "unknown method \"\(method)\"")))
                return
            }
            start(route: route, method: method, id: id, params: params, session: session, started: started)
        case .success(.notification(let method, let params)):
            guard let route = router.route(for: method) else {
                session.logger.debug("notification for an unknown method ignored", metadata: ["method": "\(method)"])
                return
            }
            start(route: route, method: method, id: nil, params: params, session: session, started: started)
        }
    }

    private func start(route: RPCRouter.Route, method: String, id: RequestID?, params: JSONValue?, session: Session,
                       started: ContinuousClock.Instant) {
        switch route.body {
        case .immediate(let handler):
            runImmediately(handler, method: method, id: id, params: params, session: session, started: started)
        case .task(let handler):
            startTask(handler, arrival: { params, _ in .run(params) }, options: route.options, method: method, id: id,
                      params: params, session: session, started: started)
        case .ordered(let arrival, let run):
            startTask(run, arrival: arrival, options: route.options, method: method, id: id, params: params, session: session,
                      started: started)
        }
    }

    /// Answers on the spot: nothing is pending, so nothing can be cancelled or answered twice.
    private func runImmediately(_ handler: @Sendable (JSONValue?, RequestContext) throws -> any Encodable & Sendable,
                                method: String, id: RequestID?, params: JSONValue?, session: Session,
                                started: ContinuousClock.Instant) {
        switch session.immediateAdmission(id: id) {
        case .closed:
            return
        case .duplicateID:
            observer?(method, ErrorKind.invalidRequest.rawValue, started)
            if let id {
                session.send(MessageEncoder.failure(id: id, error: RPCError(
                    .invalidRequest, "a request with id \(id) is already pending on this connection")))
            }
            return
        case .admitted:
            break
        }
        let context = RequestContext(session: session, requestID: id, method: method)
        let (kind, answer) = Self.outcome(context: context) { try handler(params, context) }
        observer?(method, kind, started)
        if let id { session.send(answer(id)) }
    }

    /// Admits the request, runs `arrival` inline (in arrival order), then the handler in a
    /// task with what `arrival` returned, unless it answered the request itself. A plain task
    /// route's `arrival` passes the params on.
    private func startTask<Input: Sendable>(_ handler: @escaping @Sendable (Input, RequestContext) async throws -> any Encodable & Sendable,
                           arrival: @Sendable (JSONValue?, RequestContext) throws -> Arrival<Input>,
                           options: RouteOptions, method: String, id: RequestID?, params: JSONValue?, session: Session,
                           started: ContinuousClock.Instant) {
        let observer = self.observer
        let cap = options.countsTowardPendingCap ? limits().maxPendingPerSession : nil
        switch session.admit(id: id, cap: cap) {
        case .closed:
            return
        case .busy(let cap):
            observer?(method, ErrorKind.busy.rawValue, started)
            if let id {
                session.send(MessageEncoder.failure(id: id, error: RPCError(
                    .busy, "too many pending requests on this connection (max_pending_per_session = \(cap))")))
            }
        case .shuttingDown:
            observer?(method, ErrorKind.busy.rawValue, started)
            if let id {
                session.send(MessageEncoder.failure(id: id, error: RPCError(.busy, "the daemon is shutting down")))
            }
        case .duplicateID:
            observer?(method, ErrorKind.invalidRequest.rawValue, started)
            if let id {
                session.send(MessageEncoder.failure(id: id, error: RPCError(
                    .invalidRequest, "a request with id \(id) is already pending on this connection")))
            }
        case .admitted(let serial, let key):
            let context = RequestContext(session: session, requestID: id, method: method,
                                         pending: Session.PendingEntry(key: key, serial: serial))
            let arrived: Arrival<Input>
            do {
                arrived = try arrival(params, context)
            } catch {
                let (kind, answer) = Self.failure(error, context: context)
                observer?(method, kind, started)
                if session.claim(key: key, serial: serial), let id { session.send(answer(id)) }
                session.release(key: key, serial: serial)
                return
            }
            guard case .run(let input) = arrived else {
                // Answered inline by its arrival step (a memory hit of `thumbnail.show`).
                observer?(method, Self.ok, started)
                session.release(key: key, serial: serial)
                return
            }
            let task = Task {
                let (kind, answer) = await Self.run(handler, input: input, context: context)
                observer?(method, kind, started)
                if session.claim(key: key, serial: serial), let id {
                    session.send(answer(id))
                }
                session.release(key: key, serial: serial)
            }
            session.attach(task, key: key, serial: serial)
        }
    }

    /// The outcome label of a request that succeeded (failures carry their error kind's name).
    static let ok = "ok"

    /// An outcome: its label (`ok` or the error kind's name) and the answer as a function of the
    /// id, so a notification's outcome is computed but never encoded for sending.
    private typealias Outcome = (kind: String, answer: @Sendable (RequestID) -> OutboundMessage)

    /// Runs a handler and maps its outcome to the contract's error model.
    private static func run<Input: Sendable>(_ handler: @Sendable (Input, RequestContext) async throws -> any Encodable & Sendable,
                                             input: Input, context: RequestContext) async -> Outcome {
        do {
            let result = try await handler(input, context)
            return success(result, context: context)
        } catch {
            return failure(error, context: context)
        }
    }

    /// The synchronous twin of `run`, for immediate handlers.
    private static func outcome(context: RequestContext, _ body: () throws -> any Encodable & Sendable) -> Outcome {
        do {
            return success(try body(), context: context)
        } catch {
            return failure(error, context: context)
        }
    }

    private static func success(_ result: any Encodable & Sendable, context: RequestContext) -> Outcome {
        return (ok, { id in
            do {
                return try MessageEncoder.success(id: id, result: result)
            } catch {
                context.logger.error("a result could not be encoded", metadata: ["error": "\(error)"])
                return MessageEncoder.failure(id: id, error: RPCError(.internal, "internal error: the result could not be encoded"))
            }
        })
    }

    /// Maps what a handler threw to the contract's error model, and logs the failure.
    private static func failure(_ error: any Error, context: RequestContext) -> Outcome {
        switch WireErrorMapping.mapped(error) {
        case let error as RPCError:
            logFailure(error, context: context)
            return (error.kind.rawValue, { id in MessageEncoder.failure(id: id, error: error) })
        case is CancellationError:
            let cancelled = RPCError(.cancelled, "the request was cancelled", reason: "cancelled")
            logFailure(cancelled, context: context)
            return (ErrorKind.cancelled.rawValue, { id in MessageEncoder.failure(id: id, error: cancelled) })
        default:
            context.logger.error("a handler failed unexpectedly", metadata: ["error": "\(error)"])
            return (ErrorKind.internal.rawValue, { id in MessageEncoder.failure(id: id, error: RPCError(.internal, "internal error")) })
        }
    }

    /// Every failed request, with its kind and how long it took: `warning` when the outside
    /// failed (a provider, an image host, the network, the disk), `info` when the request did
    /// (bad params, unknown ids, refused targets), `debug` for cancellations (a grid recycles
    /// tiles all the time).
    static func logFailure(_ error: RPCError, context: RequestContext) {
        let level: Logger.Level = switch error.kind {
        case .cancelled: .debug
        case .upstreamError, .providerUnavailable, .rateLimited, .networkUnavailable, .timeout, .storageUnavailable, .internal: .warning
        default: .info
        }
        guard context.session.logger.logLevel <= level else { return }
        context.logger.log(level: level, "request failed", metadata: [
            "kind": "\(error.kind.rawValue)", "code": "\(error.kind.code)",
            "duration_ms": "\(context.elapsedMilliseconds)",
            "error": "\(error.message)",
        ])
    }
}
