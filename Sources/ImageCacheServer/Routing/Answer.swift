import ImageCacheKit
import Logging

/// A request's answer, decided and not yet sent, and the one place answers are made and leave.
///
/// Every answer to a request is made here: a result (`result`, `encoded`, or `success` for a
/// method that writes its own line), a refusal the server decided (`refusal`), or a failure a
/// handler threw (`failure`: the wire error mapping applied, and the request's log line).
/// The wire error mapping is called from here only (`WireErrorMapping`), `prefetch.finished`'s
/// errors included (`wireError`).
///
/// An answer is claimed before it is written, and counted as it is claimed
/// (`RequestContext.claimAnswer`): the dispatcher sends its routes' answers with `send`; the
/// slot table claims a slot's answer under its own lock and writes its `line` in the order it
/// decided; answers refused before any route ran are counted and sent by `refuse` and
/// `refuseLine`. The line for the request's id is made only when it is sent, so a
/// notification's never is.
struct Answer: Sendable {
    /// What the request is counted as: `ok` or the error kind's name.
    let outcome: String

    /// The outcome label of a request that succeeded (failures carry their error kind's name).
    static let ok = "ok"
    /// The answer's line for the request's id.
    let line: @Sendable (RequestID) -> OutboundMessage

    // MARK: Making answers

    /// The answer carrying `result`: its success line, or, when the result cannot be encoded
    /// (logged to the request's logger: a bug), -32603.
    static func result<R: Encodable & Sendable>(_ result: R, context: RequestContext) -> Answer {
        Answer(outcome: ok) { id in
            do {
                return try MessageEncoder.success(id: id, result: result)
            } catch {
                context.logger.error("a result could not be encoded", metadata: ["error": "\(error)"])
                return MessageEncoder.failure(id: id, error: RPCError(.internal, "internal error: the result could not be encoded"))
            }
        }
    }

    /// The answer carrying a result encoded once (`EncodedResult`).
    static func encoded<R: Encodable & Sendable>(_ encoded: EncodedResult<R>) -> Answer {
        Answer(outcome: ok) { id in MessageEncoder.success(id: id, encoded: encoded) }
    }

    /// A success whose line its method writes itself (`thumbnail.show`, whose result is
    /// written straight into the line's buffer and may send a sealed file's bytes). A memory
    /// hit hands the same line to `SlotTable.finish(_:success:)` instead, which keeps no
    /// closure and so allocates none.
    static func success(_ line: @escaping @Sendable (RequestID) -> OutboundMessage) -> Answer {
        Answer(outcome: ok, line: line)
    }

    /// An answer the server decided itself (a refusal, a recycled slot, a cancelled request):
    /// mapped like any error, not logged as a failure (nothing failed).
    static func refusal(_ error: any EngineError) -> Answer {
        let wire = WireErrorMapping.rpcError(for: error)
        return Answer(outcome: wire.kind.rawValue) { id in MessageEncoder.failure(id: id, error: wire) }
    }

    /// The answer to what a handler threw: the error model of docs/protocol.md (Errors)
    /// applied, and the failure logged (`logFailure`). What `WireErrorMapping` knows is
    /// answered as it maps; anything else as -32603, logged with its detail, never sent.
    static func failure(_ error: any Error, context: RequestContext) -> Answer {
        let wire: RPCError
        switch WireErrorMapping.mapped(error) {
        case let mapped as RPCError:
            wire = mapped
            logFailure(wire, context: context)
        default:
            context.logger.error("a handler failed unexpectedly", metadata: ["error": "\(error)"])
            wire = RPCError(.internal, "internal error")
        }
        return Answer(outcome: wire.kind.rawValue) { id in MessageEncoder.failure(id: id, error: wire) }
    }

    /// The wire error of something that failed outside any answer, for a notification that
    /// reports it (`prefetch.finished` of an item that could not load or was withdrawn).
    static func wireError(for error: any Error) -> RPCError {
        WireErrorMapping.rpcError(for: error)
    }

    // MARK: Sending answers

    /// Sends the answer when the request's claim is still open (counting it as claimed), or
    /// only counts it when `cancel` or the session's close took the request (they answer it
    /// without counting). A notification is counted and never sent.
    func send(for context: RequestContext) {
        guard context.claimAnswer(outcome: outcome) else {
            context.settle(outcome: outcome)
            return
        }
        if let id = context.requestID { context.session.send(line(id)) }
    }

    /// Ends a request whose answer the handler's own machinery claimed, counted and sent (the
    /// slot table): it is counted here only when nobody did (`cancel` or the close took it).
    static func settleSent(context: RequestContext) {
        context.settle(outcome: ErrorKind.cancelled.rawValue)
    }

    /// A request refused before any route ran (there is no context yet): counted with
    /// `observer`, then answered; a notification's refusal is counted and never sent.
    static func refuse(_ error: ServerError, id: RequestID?, session: Session, observer: MethodObserver?,
                       started: ContinuousClock.Instant) {
        let answer = refusal(error)
        observer?(answer.outcome, started)
        if let id { session.send(answer.line(id)) }
    }

    /// A line that is not a valid request: counted with `observer` and answered even without
    /// an id (`"id": null`), since the line was meant as a request.
    static func refuseLine(_ error: RPCError, id: RequestID?, session: Session, observer: MethodObserver?,
                           started: ContinuousClock.Instant) {
        session.logger.debug("invalid request", metadata: ["error": "\(error)"])
        observer?(error.kind.rawValue, started)
        session.send(MessageEncoder.failure(id: id, error: error))
    }

    /// The answer to a request line longer than `max_request_bytes` (`limit`): `"id": null`,
    /// since the line was never read far enough to find one; the connection closes after it.
    static func lineTooLong(limit: Int) -> OutboundMessage {
        MessageEncoder.failure(id: nil, error: RPCError(
            .invalidRequest, "the request line is longer than max_request_bytes (\(limit) bytes)"))
    }

    // MARK: Logging

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
