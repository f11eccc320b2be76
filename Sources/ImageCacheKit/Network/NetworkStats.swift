/// The engine's counters, as `stats` reports them (`network: {inFlight, queued, requests,
/// bytesReceived, bytesDiscarded}`), plus `retries` for tests and tuning.
public struct NetworkStats: Sendable, Equatable {
    /// Transfers inside the curl multi handle right now.
    public var inFlight = 0
    /// Transfers waiting for admission (or for a retry's backoff to elapse).
    public var queued = 0
    /// HTTP requests started since launch (every retry and redirect hop counts).
    public var requests = 0
    /// Body bytes received since launch.
    public var bytesReceived = 0
    /// Body bytes received by transfers that were then cancelled: bandwidth spent for nothing.
    package var bytesDiscarded = 0
    /// Requests sent again after a failure.
    package var retries = 0
    /// Bodies delivered that their consumers have not released yet
    /// (`TransferRequest.awaitsRelease`): past `prefetchLookAhead`, prefetches wait.
    package var unreleasedBodies = 0
    /// TCP connections libcurl opened (`CURLINFO_NUM_CONNECTS` summed over every attempt,
    /// cancelled ones included): with reuse and HTTP/2 multiplexing this stays far below
    /// `requests`; on HTTP/1.1 every cancelled transfer costs one, since its connection cannot
    /// be reused mid-body.
    public var connectionsOpened = 0
    /// All counters at zero (a new engine).
    public init() {}
}
