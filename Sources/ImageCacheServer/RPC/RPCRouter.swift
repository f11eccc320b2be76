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
        var options: RouteOptions
        var invoke: @Sendable (JSONValue?, RequestContext) async throws -> any Encodable & Sendable
    }

    private var routes: [String: Route] = [:]

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
        routes[method] = Route(options: options) { params, context in
            let typed = try StrictParamsDecoder.decode(P.self, from: params)
            return try await handler(typed, context)
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
    /// A logger carrying the session and request ids.
    public let logger: Logger
}
