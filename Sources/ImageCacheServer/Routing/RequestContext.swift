import Logging
import Synchronization

/// What a handler knows about the request it serves.
public struct RequestContext: Sendable {
    /// The connection the request came on; owns whatever the handler starts for it.
    public let session: Session
    /// The request's id; nil for a JSON-RPC notification (whose result nobody reads).
    public let requestID: RequestID?
    /// The method the request called.
    public let method: String
    /// The request's entry in the session's pending table (nil for inline routes).
    var pending: Session.PendingEntry? = nil
    /// Where the request is counted (nil when the server has no observer).
    var tally: RequestTally? = nil
    /// When the request arrived, for the duration its log line reports (one vDSO clock read).
    public let arrived = ContinuousClock.now

    /// The request's place in its session's arrival order (its admission serial; nil for an
    /// inline route). Handlers run as tasks that may start in another order; this does not.
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

    /// Claims the right to answer this request now, with an answer whose outcome is `outcome`
    /// (`Answer.ok` or an error kind's name): true at most once, and never after `cancel`
    /// or the session's close took it (`Session.claim`). On success the request is counted
    /// here, before the caller writes its answer, so a scrape made after the answer arrives
    /// always includes it.
    ///
    /// This is the one way an answer is claimed: the dispatcher's answers are claimed here as
    /// they are sent (`Answer.send`), and so is the answer of whatever must decide it under a
    /// lock of its own (the slot table: no late results), which the dispatcher then never
    /// sends (`Reply.sent`). An inline
    /// route has no pending entry: nothing else can answer it, so its claim always succeeds.
    func claimAnswer(outcome: String) -> Bool {
        if let pending, !session.claim(key: pending.key, serial: pending.serial) { return false }
        tally?.record(outcome)
        return true
    }

    /// Stops the request's work (its task is cancelled) without answering it: for whoever
    /// answered it another way (the slot table, recycling its slot). Nothing for an inline
    /// route, which has no task.
    func cancelWork() {
        if let pending { session.cancelWork(key: pending.key, serial: pending.serial) }
    }

    /// Counts the request with `outcome` unless a claim already did: for a request whose
    /// answer `cancel` or the session's close took (they answer without counting), when its
    /// work ends.
    func settle(outcome: String) {
        tally?.record(outcome)
    }
}

/// A request's one count: the observer is told of it at most once, by whichever comes first of
/// the claim of its answer and the end of its work (`RequestContext.claimAnswer`, `settle`).
final class RequestTally: Sendable {
    private let observer: MethodObserver
    private let started: ContinuousClock.Instant
    private let counted = Atomic<Bool>(false)

    init(observer: @escaping MethodObserver, started: ContinuousClock.Instant) {
        self.observer = observer
        self.started = started
    }

    /// Tells the observer, the first time only.
    func record(_ outcome: String) {
        guard !counted.exchange(true, ordering: .relaxed) else { return }
        observer(outcome, started)
    }
}
