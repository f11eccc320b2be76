import ImageCacheKit

/// Where and how a method's handler runs: the one choice a method makes besides its types.
///
/// - `task`: in its own task on the cooperative pool; may wait for anything, can be cancelled
///   (`cancel`, the session's close). Almost every method.
/// - `inline`: on the connection's event loop, at once, with no task and no pending entry: for
///   answers from memory that never wait (`hello`, `stats`, `cancel`, `thumbnail.recycle`).
/// - `ordered`: a first step inline on the event loop, in arrival order, then the rest in a
///   task (none when the first step answered): `thumbnail.show`, whose slot must change in the
///   order requests arrived and whose memory hit is answered in that first step.
///
/// Params reach the handler decoded and validated; what it returns is encoded by the router
/// (`Reply`), what it throws is answered by `Answer.failure`.
public struct RouteHandler<M: RPCMethod>: Sendable {
    let body: RouteBody
    var scan: (@Sendable (inout RequestScanner) -> RPCRouter.BoundArrival?)? = nil

    /// Runs `run` in its own task; its result is the answer.
    public static func task(_ run: @escaping @Sendable (M.Params, RequestContext) async throws -> M.Result) -> Self {
        Self(body: .admitted { raw, _ in
            let params = try StrictParamsDecoder.decodeAndValidate(M.Params.self, from: raw)
            return .run { context in RouteAnswer(Reply<M.Result>.result(try await run(params, context)), context: context) }
        })
    }

    /// Runs `answer` inline on the event loop. It must never block or wait; anything that does
    /// belongs in `task`.
    public static func inline(_ answer: @escaping @Sendable (M.Params, RequestContext) throws -> Reply<M.Result>) -> Self {
        Self(body: .inline { raw, context in
            RouteAnswer(try answer(try StrictParamsDecoder.decodeAndValidate(M.Params.self, from: raw), context), context: context)
        })
    }

    /// Runs `arrival` inline on the event loop as the request is admitted, so the requests of
    /// one connection take that step in the order they arrived (a slot shown then recycled is
    /// recycled, never the reverse); then `run`, in its own task, with what `arrival` gave,
    /// unless `arrival` answered the request itself (`Arrival.sent`: then no task starts).
    /// `arrival` must never block. When it throws, that is the answer and no task starts.
    static func ordered<Input: Sendable>(
        arrival: @escaping @Sendable (M.Params, RequestContext) throws -> Arrival<Input>,
        run: @escaping @Sendable (Input, RequestContext) async throws -> Reply<M.Result>
    ) -> Self {
        Self(body: orderedBody(arrival, run))
    }

    /// The route of `ordered`: params decoded and validated, `arrival`, then `run` bound to
    /// what it gave.
    fileprivate static func orderedBody<Input: Sendable>(
        _ arrival: @escaping @Sendable (M.Params, RequestContext) throws -> Arrival<Input>,
        _ run: @escaping @Sendable (Input, RequestContext) async throws -> Reply<M.Result>
    ) -> RouteBody {
        .admitted { raw, context in
            bind(try arrival(try StrictParamsDecoder.decodeAndValidate(M.Params.self, from: raw), context), run)
        }
    }

    /// What `arrival` gave, with the task that runs the rest bound to it.
    fileprivate static func bind<Input: Sendable>(
        _ arrived: Arrival<Input>, _ run: @escaping @Sendable (Input, RequestContext) async throws -> Reply<M.Result>
    ) -> Arrival<RouteWork> {
        switch arrived {
        case .sent: .sent
        case .run(let input): .run { context in RouteAnswer(try await run(input, context), context: context) }
        }
    }
}

extension RouteHandler where M.Params: ScannableParams {
    /// `ordered` for params a `RequestScanner` can read: a plain request line of this method
    /// goes from bytes to typed params in one pass (`RPCRouter.scan`), validated like any
    /// other, before its arrival step; any other line takes the general path.
    static func ordered<Input: Sendable>(
        arrival: @escaping @Sendable (M.Params, RequestContext) throws -> Arrival<Input>,
        run: @escaping @Sendable (Input, RequestContext) async throws -> Reply<M.Result>
    ) -> Self {
        var handler = Self(body: orderedBody(arrival, run))
        handler.scan = { scanner in
            guard let params = M.Params.scan(&scanner) else { return nil }
            return { context in
                try params.validate()
                return bind(try arrival(params, context), run)
            }
        }
        return handler
    }
}

/// What a handler gives back.
public enum Reply<Result: Encodable & Sendable>: Sendable {
    /// The result, for the router to encode and send.
    case result(Result)
    /// The result already encoded (by `EncodedResult`, with the router's encoder), reused as
    /// it is: for answers that change rarely and are asked often (`hello`).
    case encoded(EncodedResult<Result>)
    /// The answer has gone out already: the handler's own machinery claimed, counted and sent
    /// it (the slot table, which must decide a slot's answer under its lock). Nothing is sent.
    case sent
}

/// What an `ordered` route's arrival step leaves for its task.
enum Arrival<Input: Sendable>: Sendable {
    /// Run the rest in a task, with this.
    case run(Input)
    /// The step answered the request itself (a memory hit of `thumbnail.show`): no task.
    case sent
}

/// A route as the dispatcher runs it, its types erased.
enum RouteBody: Sendable {
    /// Inline on the event loop, no pending entry (`RouteHandler.inline`).
    case inline(@Sendable (JSONValue?, RequestContext) throws -> RouteAnswer)
    /// Admitted into the session's pending table, an arrival step inline, then maybe a task
    /// (`RouteHandler.task`, whose arrival step only decodes, and `.ordered`).
    case admitted(@Sendable (JSONValue?, RequestContext) throws -> Arrival<RouteWork>)
}

/// The part of a request that runs in its task.
typealias RouteWork = @Sendable (RequestContext) async throws -> RouteAnswer

/// A handler's `Reply` as the dispatcher sends it: its `Answer` (encoded when sent, so a
/// notification's line is never made), or nothing to send.
enum RouteAnswer: Sendable {
    case answer(Answer)
    case sent

    init<R: Encodable & Sendable>(_ reply: Reply<R>, context: RequestContext) {
        switch reply {
        case .result(let result): self = .answer(.result(result, context: context))
        case .encoded(let encoded): self = .answer(.encoded(encoded))
        case .sent: self = .sent
        }
    }
}
