/// What the server tells about each request once its answer is decided, in two steps so that
/// a request pays for no lookup by name: the server asks once per method (as routed, or
/// `"unknown"` for a method the router does not have, so clients cannot mint label values)
/// for that method's `MethodObserver`, when it starts, and keeps it.
public typealias RequestObserver = @Sendable (_ method: String) -> MethodObserver

/// One method's requests: told the outcome (`"ok"` or the error kind's name, e.g.
/// `"not_found"`) and when the request's line was taken from the connection. Called once per
/// request, notifications included, when its answer is claimed and before that answer is
/// written (`Dispatcher` states the rule), on whatever thread claimed it: it must be cheap and
/// never wait.
public typealias MethodObserver = @Sendable (_ outcome: String, _ started: ContinuousClock.Instant) -> Void
