import Logging
import NIOCore

/// Validates a line, admits it against the session's caps and runs its route: the one path
/// from bytes to exactly one answer.
///
/// Counting (the metrics observer) follows one rule: a request is counted once, when its
/// answer is claimed, before that answer is written (`RequestContext.claimAnswer`); an answer
/// refused before any route runs (a bad line, an unknown method, a full session) is counted
/// just before it is sent (`refuse`). So a scrape made after an answer arrived includes it,
/// whether the dispatcher, an arrival step or the slot table sent it.
final class Dispatcher: Sendable {
    let router: RPCRouter
    let limits: @Sendable () -> ServerLimits
    let registry: SessionRegistry
    /// Each method's observer (and `unknown`'s), told of every request's outcome (`ok` or its
    /// error kind) and start, once, when its answer is claimed: the metrics endpoint's
    /// requests and latencies. Made once here, so that a request only looks its method up in
    /// a table that never changes (no lock); empty when the server has no observer.
    private let observers: [String: MethodObserver]

    init(router: RPCRouter, limits: @escaping @Sendable () -> ServerLimits, registry: SessionRegistry,
         observer: RequestObserver? = nil) {
        self.router = router
        self.limits = limits
        self.registry = registry
        var observers: [String: MethodObserver] = [:]
        if let observer {
            for method in router.methods + [Self.unroutedMethod] { observers[method] = observer(method) }
        }
        self.observers = observers
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
        if let scanned = line.withUnsafeReadableBytes({ router.scan($0) }) {
            admit(options: scanned.route.options, method: scanned.method, id: scanned.id, session: session,
                  started: started) { context in try scanned.arrive(context) }
            return
        }
        guard let parsed = IncomingMessageParser.parse(line) else { return }
        switch parsed {
        case .failure(let failure):
            session.logger.debug("invalid request", metadata: ["error": "\(failure.error)"])
            // Answered even without an id (`"id": null`): the line was meant as a request.
            observers[Self.unroutedMethod]?(failure.error.kind.rawValue, started)
            session.send(MessageEncoder.failure(id: failure.id, error: failure.error))
        case .success(.request(let id, let method, let params)):
            guard let route = router.route(for: method) else {
                refuse(RPCError(.methodNotFound, "unknown method \"\(method)\""), id: id, method: Self.unroutedMethod,
                       session: session, started: started)
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
        case .inline(let answer):
            runInline(answer, method: method, id: id, params: params, session: session, started: started)
        case .admitted(let arrive):
            admit(options: route.options, method: method, id: id, session: session, started: started) { context in
                try arrive(params, context)
            }
        }
    }

    /// A request refused before any route ran: counted, then answered (a notification's
    /// refusal is counted and never sent). A line that is not a valid request is answered
    /// the same way in `handle`, with a null id when it has none.
    private func refuse(_ error: RPCError, id: RequestID?, method: String, session: Session, started: ContinuousClock.Instant) {
        observers[method]?(error.kind.rawValue, started)
        if let id { session.send(MessageEncoder.failure(id: id, error: error)) }
    }

    private func makeContext(_ session: Session, id: RequestID?, method: String, pending: Session.PendingEntry?,
                         started: ContinuousClock.Instant) -> RequestContext {
        RequestContext(session: session, requestID: id, method: method, pending: pending,
                       tally: observers[method].map { RequestTally(observer: $0, started: started) })
    }

    /// Answers on the spot: nothing is pending, so nothing can be cancelled or answered twice.
    private func runInline(_ answer: @Sendable (JSONValue?, RequestContext) throws -> RouteAnswer,
                           method: String, id: RequestID?, params: JSONValue?, session: Session,
                           started: ContinuousClock.Instant) {
        switch session.immediateAdmission(id: id) {
        case .closed:
            return
        case .duplicateID:
            refuse(Self.duplicate(id), id: id, method: method, session: session, started: started)
            return
        case .admitted:
            break
        }
        let context = makeContext(session, id: id, method: method, pending: nil, started: started)
        let decided: Decided
        do {
            decided = (Self.ok, try answer(params, context))
        } catch {
            decided = Self.failure(error, context: context)
        }
        Self.deliver(decided, context: context)
    }

    /// Admits the request, runs its arrival step inline (in arrival order), then the rest in a
    /// task, unless the step answered the request itself.
    private func admit(options: RouteOptions, method: String, id: RequestID?, session: Session,
                       started: ContinuousClock.Instant, arrival: (RequestContext) throws -> Arrival<RouteWork>) {
        let cap = options.countsTowardPendingCap ? limits().maxPendingPerSession : nil
        switch session.admit(id: id, cap: cap) {
        case .closed:
            return
        case .busy(let cap):
            refuse(RPCError(.busy, "too many pending requests on this connection (max_pending_per_session = \(cap))"),
                   id: id, method: method, session: session, started: started)
        case .shuttingDown:
            refuse(RPCError(.busy, "the daemon is shutting down"), id: id, method: method, session: session, started: started)
        case .duplicateID:
            refuse(Self.duplicate(id), id: id, method: method, session: session, started: started)
        case .admitted(let serial, let key):
            let context = makeContext(session, id: id, method: method, pending: Session.PendingEntry(key: key, serial: serial),
                                  started: started)
            let arrived: Arrival<RouteWork>
            do {
                arrived = try arrival(context)
            } catch {
                Self.deliver(Self.failure(error, context: context), context: context)
                session.release(key: key, serial: serial)
                return
            }
            guard case .run(let work) = arrived else {
                // Answered (claimed, counted and sent) by its arrival step: a memory hit of
                // `thumbnail.show`.
                Self.deliver((Self.ok, .sent), context: context)
                session.release(key: key, serial: serial)
                return
            }
            let task = Task {
                let decided: Decided
                do {
                    decided = (Self.ok, try await work(context))
                } catch {
                    decided = Self.failure(error, context: context)
                }
                Self.deliver(decided, context: context)
                session.release(key: key, serial: serial)
            }
            session.attach(task, key: key, serial: serial)
        }
    }

    private static func duplicate(_ id: RequestID?) -> RPCError {
        RPCError(.invalidRequest, "a request with id \(id.map { "\($0)" } ?? "null") is already pending on this connection")
    }

    /// The outcome label of a request that succeeded (failures carry their error kind's name).
    static let ok = "ok"

    /// A decided answer: its label (`ok` or the error kind's name) and what to send.
    private typealias Decided = (kind: String, answer: RouteAnswer)

    /// Sends a decided answer if this request's claim is still open (counting it first), or
    /// counts it when `cancel` or the close took it. An answer already sent by the handler's
    /// own machinery was counted when that claimed it.
    private static func deliver(_ decided: Decided, context: RequestContext) {
        switch decided.answer {
        case .message(let encode):
            guard context.claimAnswer(outcome: decided.kind) else {
                context.settle(outcome: decided.kind)
                return
            }
            if let id = context.requestID { context.session.send(encode(id)) }
        case .sent:
            context.settle(outcome: ErrorKind.cancelled.rawValue)
        }
    }

    /// What a handler threw, as the wire error it is answered with: the one place where the
    /// error model of docs/protocol.md (Errors) is applied to a failure, and where it is logged.
    /// What `WireErrorMapping` knows (engine errors, cancellations, the server's own `RPCError`s)
    /// is answered as it maps; anything else as -32603 (logged with detail, never sent).
    static func wireError(for error: any Error, context: RequestContext) -> RPCError {
        let wire: RPCError
        switch WireErrorMapping.mapped(error) {
        case let error as RPCError:
            wire = error
        default:
            context.logger.error("a handler failed unexpectedly", metadata: ["error": "\(error)"])
            return RPCError(.internal, "internal error")
        }
        logFailure(wire, context: context)
        return wire
    }

    /// The answer to a failure (`wireError`).
    private static func failure(_ error: any Error, context: RequestContext) -> Decided {
        let wire = wireError(for: error, context: context)
        return (wire.kind.rawValue, .message { id in MessageEncoder.failure(id: id, error: wire) })
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
