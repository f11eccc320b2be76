import NIOCore

/// Validates a line, admits it against the session's caps and runs its route: the one path
/// from bytes to exactly one answer, which leaves through `Answer`.
///
/// Counting (the metrics observer) follows one rule: a request is counted once, when its
/// answer is claimed, before that answer is written (`RequestContext.claimAnswer`); an answer
/// refused before any route runs (a bad line, an unknown method, a full session) is counted
/// just before it is sent (`Answer.refuse`). So a scrape made after an answer arrived includes it,
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
            Answer.refuseLine(failure.error, id: failure.id, session: session, observer: observers[Self.unroutedMethod],
                              started: started)
        case .success(.request(let id, let method, let params)):
            guard let route = router.route(for: method) else {
                refuse(.unknownMethod(method), id: id, method: Self.unroutedMethod, session: session, started: started)
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

    /// A request refused before any route ran: counted under `method`, then answered
    /// (`Answer.refuse`; a notification's refusal is counted and never sent).
    private func refuse(_ refusal: ServerError.Refusal, id: RequestID?, method: String, session: Session,
                        started: ContinuousClock.Instant) {
        Answer.refuse(ServerError(refusal), id: id, session: session, observer: observers[method], started: started)
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
            refuse(.duplicateID(id), id: id, method: method, session: session, started: started)
            return
        case .admitted:
            break
        }
        let context = makeContext(session, id: id, method: method, pending: nil, started: started)
        let decided: RouteAnswer
        do {
            decided = try answer(params, context)
        } catch {
            decided = .answer(.failure(error, context: context))
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
            refuse(.pendingCap(cap), id: id, method: method, session: session, started: started)
        case .shuttingDown:
            refuse(.shuttingDown, id: id, method: method, session: session, started: started)
        case .duplicateID:
            refuse(.duplicateID(id), id: id, method: method, session: session, started: started)
        case .admitted(let serial, let key):
            let context = makeContext(session, id: id, method: method, pending: Session.PendingEntry(key: key, serial: serial),
                                  started: started)
            let arrived: Arrival<RouteWork>
            do {
                arrived = try arrival(context)
            } catch {
                Answer.failure(error, context: context).send(for: context)
                session.release(key: key, serial: serial)
                return
            }
            guard case .run(let work) = arrived else {
                // Answered (claimed, counted and sent) by its arrival step: a memory hit of
                // `thumbnail.show`.
                Answer.settleSent(context: context)
                session.release(key: key, serial: serial)
                return
            }
            let task = Task {
                let decided: RouteAnswer
                do {
                    decided = try await work(context)
                } catch {
                    decided = .answer(.failure(error, context: context))
                }
                Self.deliver(decided, context: context)
                session.release(key: key, serial: serial)
            }
            session.attach(task, key: key, serial: serial)
        }
    }

    /// Sends a route's answer (`Answer.send`: only while the request's claim is open, counted
    /// as claimed), or counts one its handler's own machinery already sent.
    private static func deliver(_ decided: RouteAnswer, context: RequestContext) {
        switch decided {
        case .answer(let answer): answer.send(for: context)
        case .sent: Answer.settleSent(context: context)
        }
    }
}
