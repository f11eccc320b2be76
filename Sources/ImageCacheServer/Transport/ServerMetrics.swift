import ImageCacheKit
import Synchronization

/// Counters the server keeps about itself, readable at any time without a lock.
///
/// They exist so that the slow-reader policy can be verified by what the server did (bytes
/// it held, messages it dropped, connections it closed) rather than by timing, and so that
/// an operator can see it in logs and `stats` later.
public final class ServerMetrics: Sendable {
    private let _queuedOutboundBytes = Atomic<Int>(0)
    private let _peakQueuedOutboundBytes = Atomic<Int>(0)
    private let _droppedProgressNotifications = Atomic<Int>(0)
    private let _slowReaderDisconnects = Atomic<Int>(0)
    private let _connectionsAccepted = Atomic<Int>(0)
    private let _requestsAnswered = Atomic<Int>(0)
    private let _readPauses = Atomic<Int>(0)
    private let _acceptFailures = Atomic<Int>(0)
    private let pauseWaiters = LockedState<[(id: UInt64, continuation: CheckedContinuation<Void, Never>)]>([])
    private let nextWaiter = Atomic<UInt64>(0)
    private let acceptWaiters = LockedState<[(count: Int, id: UInt64, continuation: CheckedContinuation<Void, Never>)]>([])

    public init() {}

    /// Bytes queued for all clients and not yet handed to the kernel, now.
    public var queuedOutboundBytes: Int { _queuedOutboundBytes.load(ordering: .relaxed) }
    /// The largest number of bytes ever queued for one connection.
    public var peakQueuedOutboundBytesPerConnection: Int { _peakQueuedOutboundBytes.load(ordering: .relaxed) }
    /// `*.progress` notifications not sent because their client was not reading.
    public var droppedProgressNotifications: Int { _droppedProgressNotifications.load(ordering: .relaxed) }
    /// Connections closed because their client stopped reading.
    public var slowReaderDisconnects: Int { _slowReaderDisconnects.load(ordering: .relaxed) }
    /// Times accept() failed (out of descriptors, mostly) and accepting paused for a while.
    public var acceptFailures: Int { _acceptFailures.load(ordering: .relaxed) }
    /// Connections accepted since start.
    public var connectionsAccepted: Int { _connectionsAccepted.load(ordering: .relaxed) }
    /// Responses (results and errors) queued since start.
    public var requestsAnswered: Int { _requestsAnswered.load(ordering: .relaxed) }

    /// Times a connection stopped reading requests because its client was not reading
    /// answers (backpressure past the soft bound).
    public var readPauses: Int { _readPauses.load(ordering: .relaxed) }

    /// Returns once some connection has paused reading (at once if one already has): lets a
    /// caller wait for backpressure to engage rather than guess when it will.
    public func waitForReadPause() async {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = pauseWaiters.withLock { waiters -> Bool in
                    if readPauses > 0 { return true }
                    waiters.append((id, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let mine = pauseWaiters.withLock { waiters -> CheckedContinuation<Void, Never>? in
                guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return waiters.remove(at: index).continuation
            }
            mine?.resume()
        }
    }

    func readPaused() {
        let waiters = pauseWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            _readPauses.add(1, ordering: .relaxed)
            defer { waiters = [] }
            return waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume() }
    }

    func queued(_ delta: Int, connectionTotal: Int) {
        _queuedOutboundBytes.add(delta, ordering: .relaxed)
        if delta > 0 {
            _peakQueuedOutboundBytes.max(connectionTotal, ordering: .relaxed)
        }
    }

    func droppedProgress() { _droppedProgressNotifications.add(1, ordering: .relaxed) }
    func slowReaderDisconnected() { _slowReaderDisconnects.add(1, ordering: .relaxed) }
    /// Returns once at least `count` connections have been accepted and set up: lets a caller
    /// that opened connections know the server has seen them all.
    public func waitForConnectionsAccepted(atLeast count: Int) async {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = acceptWaiters.withLock { waiters -> Bool in
                    if connectionsAccepted >= count { return true }
                    waiters.append((count, id, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let mine = acceptWaiters.withLock { waiters -> CheckedContinuation<Void, Never>? in
                guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return waiters.remove(at: index).continuation
            }
            mine?.resume()
        }
    }

    func accepted() {
        let ready = acceptWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            let total = _connectionsAccepted.add(1, ordering: .relaxed).newValue
            let ready = waiters.filter { total >= $0.count }.map(\.continuation)
            waiters.removeAll { total >= $0.count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }
    func answered() { _requestsAnswered.add(1, ordering: .relaxed) }
    /// Counts a failed accept(); returns the count, so the caller can log the first of a run.
    func acceptFailed() -> Int { _acceptFailures.add(1, ordering: .relaxed).newValue }
}
