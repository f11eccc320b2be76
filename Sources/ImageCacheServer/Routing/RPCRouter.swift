import ImageCacheKit

/// The dispatch table: method name → typed route.
///
/// Every method is added with `register`, generic over its descriptor in the protocol module
/// (`Methods.*`), never touching the framing, the sessions or the error model. The router
/// decodes the params with the one strict decoder and runs their `validate()`
/// (`StrictParamsDecoder.decodeAndValidate`: named only, unknown names refused, `data.field`
/// on failure), runs the handler where its `RouteHandler` says, and encodes what it returns
/// with the one encoder (`MessageEncoder`); the server turns what it throws into exactly one
/// answer (`Answer.failure`). docs/architecture.md has a worked example.
///
/// ```swift
/// router.register(Methods.PhotoGet.self, .task { params, context in
///     try await engine.photo(params.photo)
/// })
/// ```
///
/// A value type: it is filled in before the server starts and read-only afterwards, so
/// dispatch needs no lock.
public struct RPCRouter: Sendable {
    /// A route with its params and result types erased: what the dispatcher runs.
    struct Route: Sendable {
        var options: RouteOptions
        var body: RouteBody
        /// For a route whose params a `RequestScanner` reads: reads them from a plain line and
        /// binds the arrival step to them; nil for every other route.
        var scan: (@Sendable (inout RequestScanner) -> BoundArrival?)?
    }

    /// An arrival step bound to the params a scanner read.
    typealias BoundArrival = @Sendable (RequestContext) throws -> Arrival<RouteWork>

    private var routes: [String: Route] = [:] {
        didSet { scannable = routes.compactMap { $0.value.scan == nil ? nil : ($0.key, Array($0.key.utf8), $0.value) } }
    }
    /// The routes with `scan`, with their method names' bytes: what `scan(_:)` matches.
    private var scannable: [(method: String, name: [UInt8], route: Route)] = []

    /// An empty table; the daemon adds its method families (`ImageCacheDaemon`).
    public init() {}

    /// Adds (or replaces) the route of `method`, run as `handler` says.
    ///
    /// `M.Params` is decoded and validated before the handler runs; a failure answers -32602
    /// without calling it. Whatever the handler throws is answered by `Answer.failure`.
    public mutating func register<M: RPCMethod>(_ method: M.Type, options: RouteOptions = RouteOptions(),
                                                _ handler: RouteHandler<M>) {
        routes[M.name.rawValue] = Route(options: options, body: handler.body, scan: handler.scan)
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
    /// JSON-RPC does not define) for a route with `scan` whose params scan; nil sends the line
    /// down the general path, which is the authority on everything else. Members may come in
    /// any order (Foundation's `JSONEncoder` on Linux writes them in hash order): the params
    /// object is passed over first and read by the method's own scanner once the envelope is
    /// known.
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
                found = scannable.first { entry in entry.name.withUnsafeBytes { RequestScanner.same($0, name) } }
                return found != nil
            }
            if RequestScanner.key(key, is: "params") {
                return RequestScanner.once(&params) { scanner.skipObject() }
            }
            return false
        }
        guard read, scanner.atEnd(), version, let id, let found, let params else { return nil }
        var paramsScanner = RequestScanner(UnsafeRawBufferPointer(rebasing: line[params]))
        guard let arrive = found.route.scan?(&paramsScanner), paramsScanner.atEnd() else { return nil }
        return ScannedRequest(id: id, method: found.method, route: found.route, arrive: arrive)
    }
}

/// How the server treats a method's requests.
public struct RouteOptions: Sendable {
    /// Whether the request counts against `max_pending_per_session` (routes that run a task
    /// or an ordered step; inline routes never do). `prefetch.cancel` does not: a client at
    /// its cap must still be able to withdraw work.
    public var countsTowardPendingCap: Bool

    /// The default counts every request, which is right for anything that does work.
    public init(countsTowardPendingCap: Bool = true) {
        self.countsTowardPendingCap = countsTowardPendingCap
    }
}
