import ImageCacheKit
import Synchronization

/// Counters the server keeps about itself, readable at any time without a lock (the two
/// rare ones, read pauses and accepts, are `Observed`, so a caller can await them).
///
/// They exist so that the slow-reader policy can be verified by what the server did (bytes
/// it held, messages it dropped, connections it closed) rather than by timing, and so that
/// an operator can see it in logs and `stats` later.
public final class ServerMetrics: Sendable {
    private let _queuedOutboundBytes = Atomic<Int>(0)
    private let _peakQueuedOutboundBytes = Atomic<Int>(0)
    private let _droppedProgressNotifications = Atomic<Int>(0)
    private let _slowReaderDisconnects = Atomic<Int>(0)
    private let _requestsAnswered = Atomic<Int>(0)
    private let _acceptFailures = Atomic<Int>(0)

    /// Times a connection stopped reading requests because its client was not reading
    /// answers: a caller can wait for backpressure to engage (`wait { $0 > 0 }`) rather than
    /// guess when it will.
    package let readPauseCount = Observed(0)
    /// Connections accepted and set up since start: a caller that opened connections can wait
    /// until the server has seen them all.
    package let acceptedCount = Observed(0)

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
    public var connectionsAccepted: Int { acceptedCount.value }
    /// Responses (results and errors) queued since start.
    public var requestsAnswered: Int { _requestsAnswered.load(ordering: .relaxed) }

    /// Times a connection stopped reading requests because its client was not reading
    /// answers (backpressure past the soft bound).
    public var readPauses: Int { readPauseCount.value }

    func readPaused() { readPauseCount.update { $0 += 1 } }

    func queued(_ delta: Int, connectionTotal: Int) {
        _queuedOutboundBytes.add(delta, ordering: .relaxed)
        if delta > 0 {
            _peakQueuedOutboundBytes.max(connectionTotal, ordering: .relaxed)
        }
    }

    func droppedProgress() { _droppedProgressNotifications.add(1, ordering: .relaxed) }
    func slowReaderDisconnected() { _slowReaderDisconnects.add(1, ordering: .relaxed) }
    func accepted() { acceptedCount.update { $0 += 1 } }
    func answered() { _requestsAnswered.add(1, ordering: .relaxed) }
    /// Counts a failed accept(); returns the count, so the caller can log the first of a run.
    func acceptFailed() -> Int { _acceptFailures.add(1, ordering: .relaxed).newValue }
}
