import ImageCacheKit
import Logging

/// The dispatch table: method name → typed handler.
///
/// Every later feature adds its methods here with `register`, never touching the framing,
/// the sessions or the error model: the router decodes the handler's params strictly
/// (`StrictParamsDecoder`: named only, unknown names refused, `data.field` on failure),
/// and the server turns what the handler returns or throws into exactly one answer.
///
/// ```swift
/// var router = RPCRouter()
/// router.register("photo.get") { (params: PhotoGetParams, context) in
///     try await engine.photo(params.photo)
/// }
/// ```
///
/// A value type: it is filled in before the server starts and read-only afterwards, so
/// dispatch needs no lock.
public struct RPCRouter: Sendable {
    /// A handler with its params type erased; what the server calls.
    struct Route: Sendable {
        /// How the handler runs.
        enum Body: Sendable {
            /// In its own task: may wait for anything, can be cancelled.
            case task(@Sendable (JSONValue?, RequestContext) async throws -> any Encodable & Sendable)
            /// Inline on the connection's event loop: answers from memory, never waits.
            case immediate(@Sendable (JSONValue?, RequestContext) throws -> any Encodable & Sendable)
            /// A first step inline on the event loop, in arrival order, then the rest in a task
            /// (none when the first step answered the request itself).
            case ordered(arrival: @Sendable (JSONValue?, RequestContext) throws -> Arrival<any Sendable>,
                         run: @Sendable (any Sendable, RequestContext) async throws -> any Encodable & Sendable)
        }

        var options: RouteOptions
        var body: Body
        /// For a route whose params are `ScannableParams`: reads them from a plain line and
        /// binds the arrival step to them (`scan(_:)`); nil for every other route.
        var scanArrival: (@Sendable (inout RequestScanner) -> BoundArrival?)? = nil
    }

    /// An arrival step bound to the params a scanner read.
    typealias BoundArrival = @Sendable (RequestContext) throws -> Arrival<any Sendable>

    private var routes: [String: Route] = [:] {
        didSet { scannable = routes.compactMap { $0.value.scanArrival == nil ? nil : ($0.key, Array($0.key.utf8), $0.value) } }
    }
    /// The routes with `scanArrival`, with their method names' bytes: what `scan(_:)` matches.
    private var scannable: [(method: String, name: [UInt8], route: Route)] = []

    /// An empty table; `hello`, `stats` and `cancel` are added by the daemon.
    public init() {}

    /// Adds (or replaces) the handler for `method`.
    ///
    /// `P` is decoded from the request's params before the handler runs; a failure answers
    /// -32602 without calling it. Whatever the handler throws is answered as is when it is
    /// an `RPCError`, as 1007 `cancelled` for `CancellationError`, and as -32603 (logged with
    /// detail, never sent) otherwise.
    public mutating func register<P: Decodable & Sendable, R: Encodable & Sendable>(
        _ method: String,
        options: RouteOptions = RouteOptions(),
        _ handler: @escaping @Sendable (P, RequestContext) async throws -> R
    ) {
        routes[method] = Route(options: options, body: .task { params, context in
            let typed = try StrictParamsDecoder.decode(P.self, from: params)
            return try await handler(typed, context)
        })
    }

    /// Adds a handler that answers at once from memory (`hello`, `stats`, `cancel`, `layout`):
    /// it runs inline on the connection's event loop, with no task and no thread hop, which
    /// is what makes a trivial round trip cheap. It must never block or wait; anything that
    /// does belongs in `register`. Params are decoded as strictly as for `register`.
    public mutating func registerImmediate<P: Decodable & Sendable, R: Encodable & Sendable>(
        _ method: String,
        _ handler: @escaping @Sendable (P, RequestContext) throws -> R
    ) {
        routes[method] = Route(options: RouteOptions(countsTowardPendingCap: false), body: .immediate { params, context in
            let typed = try StrictParamsDecoder.decode(P.self, from: params)
            return try handler(typed, context)
        })
    }

    /// Adds a handler whose first step, `arrival`, runs inline on the connection's event loop
    /// as the request is admitted, so the requests of one connection take that step in the
    /// order they arrived (a slot shown then recycled is recycled, never the reverse); the
    /// rest runs in its own task like any `register`ed handler and gets what `arrival`
    /// returned. `arrival` must never block. When it throws, that is the answer and no task
    /// starts.
    public mutating func register<P: Decodable & Sendable, T: Sendable, R: Encodable & Sendable>(
        _ method: String,
        options: RouteOptions = RouteOptions(),
        arrival: @escaping @Sendable (P, RequestContext) throws -> T,
        _ handler: @escaping @Sendable (T, RequestContext) async throws -> R
    ) {
        // A step that may answer by itself must come through the overload that looks.
        precondition(!(T.self is any AnswerableOnArrival.Type), "\(method): register an AnswerableOnArrival arrival with its overload")
        registerOrdered(method, options: options, arrival: { .run(try arrival($0, $1)) }, handler)
    }

    /// `register(_:options:arrival:_:)` for an `arrival` that may answer the request itself
    /// (`AnswerableOnArrival`): then no task starts, and nothing is boxed or cast at run time
    /// to find out (a memory hit's whole answer costs a few microseconds).
    mutating func register<P: Decodable & Sendable, T: AnswerableOnArrival, R: Encodable & Sendable>(
        _ method: String,
        options: RouteOptions = RouteOptions(),
        arrival: @escaping @Sendable (P, RequestContext) throws -> T,
        _ handler: @escaping @Sendable (T, RequestContext) async throws -> R
    ) {
        registerOrdered(method, options: options, arrival: { params, context in
            let prepared = try arrival(params, context)
            return prepared.answeredOnArrival ? .answered : .run(prepared)
        }, handler)
    }

    /// The route both `arrival` overloads make: params decoded strictly, then `arrival`,
    /// whose input (unless it answered) the handler's task gets.
    private mutating func registerOrdered<P: Decodable & Sendable, T: Sendable, R: Encodable & Sendable>(
        _ method: String,
        options: RouteOptions,
        arrival: @escaping @Sendable (P, RequestContext) throws -> Arrival<T>,
        _ handler: @escaping @Sendable (T, RequestContext) async throws -> R
    ) {
        routes[method] = Route(options: options, body: .ordered(arrival: { params, context in
            let typed = try StrictParamsDecoder.decode(P.self, from: params)
            return try Self.erased(arrival(typed, context))
        }, run: { prepared, context in
            // `prepared` is what `arrival` returned just before, for this same route.
            try await handler(prepared as! T, context)
        }), scanArrival: (P.self as? any ScannableParams.Type).map { Self.scanArrival($0, arrival) })
    }

    private static func erased<T>(_ arrived: Arrival<T>) -> Arrival<any Sendable> {
        switch arrived {
        case .run(let prepared): .run(prepared)
        case .answered: .answered
        }
    }

    /// `Route.scanArrival` for params of type `Q` (the route's `P`, opened once here, so that
    /// nothing is cast per request).
    private static func scanArrival<Q: ScannableParams, P, T>(
        _: Q.Type, _ arrival: @escaping @Sendable (P, RequestContext) throws -> Arrival<T>
    ) -> @Sendable (inout RequestScanner) -> BoundArrival? {
        let typed = arrival as! @Sendable (Q, RequestContext) throws -> Arrival<T>
        return { scanner in
            guard let params = Q.scan(&scanner) else { return nil }
            return { context in try erased(typed(params, context)) }
        }
    }

    /// `registerImmediate` for a method without params.
    public mutating func registerImmediate<R: Encodable & Sendable>(
        _ method: String,
        _ handler: @escaping @Sendable (RequestContext) throws -> R
    ) {
        registerImmediate(method) { (_: NoParams, context: RequestContext) in
            try handler(context)
        }
    }

    /// Adds a handler for a method that takes no params: any param given is refused with
    /// -32602, like any other unknown param.
    public mutating func register<R: Encodable & Sendable>(
        _ method: String,
        options: RouteOptions = RouteOptions(),
        _ handler: @escaping @Sendable (RequestContext) async throws -> R
    ) {
        register(method, options: options) { (_: NoParams, context: RequestContext) in
            try await handler(context)
        }
    }

    /// The registered method names, sorted (for logs and docs).
    public var methods: [String] { routes.keys.sorted() }

    func route(for method: String) -> Route? { routes[method] }

    /// A request line read whole by a `RequestScanner`: what the dispatcher admits and starts.
    struct ScannedRequest {
        var id: RequestID
        var method: String
        var route: Route
        var arrive: BoundArrival
    }

    /// The request on `line` when it is a plain request (an id, every member once, nothing
    /// JSON-RPC does not define) for a route with `scanArrival` whose params scan; nil sends
    /// the line down the general path, which is the authority on everything else. Members
    /// may come in any order (Foundation's `JSONEncoder` on Linux writes them in hash order):
    /// the params object is passed over first and read by the method's own scanner once the
    /// envelope is known.
    func scan(_ line: UnsafeRawBufferPointer) -> ScannedRequest? {
        guard !scannable.isEmpty else { return nil }
        var scanner = RequestScanner(line)
        var version = false
        var id: RequestID?
        var found: (method: String, name: [UInt8], route: Route)?
        var params: Range<Int>?
        let read = scanner.object { scanner, key in
            if RequestScanner.key(key, is: "jsonrpc") {
                guard !version, scanner.string(equals: "2.0") else { return false }
                version = true
                return true
            }
            if RequestScanner.key(key, is: "id") {
                return RequestScanner.once(&id) { scanner.integer().map(RequestID.int) ?? scanner.string().map(RequestID.string) }
            }
            if RequestScanner.key(key, is: "method") {
                guard found == nil, let name = scanner.plainStringBytes() else { return false }
                found = scannable.first { $0.name.elementsEqual(name) }
                return found != nil
            }
            if RequestScanner.key(key, is: "params") {
                return RequestScanner.once(&params) { scanner.skipObject() }
            }
            return false
        }
        guard read, scanner.atEnd(), version, let id, let found, let params else { return nil }
        var paramsScanner = RequestScanner(UnsafeRawBufferPointer(rebasing: line[params]))
        guard let arrive = found.route.scanArrival?(&paramsScanner), paramsScanner.atEnd() else { return nil }
        return ScannedRequest(id: id, method: found.method, route: found.route, arrive: arrive)
    }
}

/// What a request's arrival step leaves for its task: the input to run it with, or nothing
/// because the step answered the request itself.
enum Arrival<Input: Sendable>: Sendable {
    case run(Input)
    case answered
}

/// What an `arrival` step returns when it may have answered its request itself, inline (a
/// thumbnail found in the memory cache): then no task is started for it at all, which is what
/// makes a hit cost about as little as `hello`.
protocol AnswerableOnArrival: Sendable {
    /// Whether the request was answered (claimed and sent) during its arrival step.
    var answeredOnArrival: Bool { get }
}

/// How the server treats a method's requests.
public struct RouteOptions: Sendable {
    /// Whether the request counts against `max_pending_per_session`. `cancel` does not:
    /// a client at its cap must still be able to cancel.
    public var countsTowardPendingCap: Bool

    /// The default counts every request, which is right for anything that does work.
    public init(countsTowardPendingCap: Bool = true) {
        self.countsTowardPendingCap = countsTowardPendingCap
    }
}

/// The params of a method that takes none: an empty object, or no params at all.
public struct NoParams: Decodable, Sendable {
    /// No params, for calling a handler directly (tests, other handlers).
    public init() {}

    /// Accepts `{}` only: every member of the object is reported as an unknown param.
    public init(from decoder: any Decoder) throws {
        // Opening the container records the object's keys, so any member is reported unknown.
        _ = try decoder.container(keyedBy: NoKeys.self)
    }

    private enum NoKeys: CodingKey {}
}

/// What a handler knows about the request it serves.
public struct RequestContext: Sendable {
    /// The connection the request came on; owns whatever the handler starts for it.
    public let session: Session
    /// The request's id; nil for a JSON-RPC notification (whose result nobody reads).
    public let requestID: RequestID?
    /// The method the request called.
    public let method: String
    /// The request's entry in the session's pending table (nil for immediate routes).
    var pending: Session.PendingEntry? = nil
    /// When the request arrived, for the duration its log line reports (one vDSO clock read).
    public let arrived = ContinuousClock.now

    /// The request's place in its session's arrival order (its admission serial; nil for an
    /// immediate route). Handlers run as tasks that may start in another order; this does not.
    public var arrivalSerial: UInt64? { pending?.serial }

    /// Whole milliseconds since the request arrived (`duration_ms=` in log lines).
    public var elapsedMilliseconds: Int { (ContinuousClock.now - arrived).wholeMilliseconds }

    /// A logger carrying the session's metadata, the request id and the method.
    ///
    /// Made when something logs, not for every request: two metadata entries (an id rendered
    /// as text and the method) cost a memory hit's answer about a microsecond, and most
    /// requests never log a line.
    public var logger: Logger {
        var logger = session.logger
        if let requestID { logger[metadataKey: "request"] = "\(requestID)" }
        logger[metadataKey: "method"] = "\(method)"
        return logger
    }

    /// Claims the right to answer this request now (`Session.claim`): true at most once, and
    /// never after `cancel` or the session's close took it. A handler that must decide its
    /// answer under a lock of its own (slots: no late results) claims there and sends what it
    /// decided; the server's own claim when the handler returns then fails, so nothing is
    /// answered twice.
    func claimAnswer() -> Bool {
        guard let pending else { return false }
        return session.claim(key: pending.key, serial: pending.serial)
    }
}
