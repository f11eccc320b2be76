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

    public init() {}

    /// Bytes queued for all clients and not yet handed to the kernel, now.
    public var queuedOutboundBytes: Int { _queuedOutboundBytes.load(ordering: .relaxed) }
    /// The largest number of bytes ever queued for one connection.
    public var peakQueuedOutboundBytesPerConnection: Int { _peakQueuedOutboundBytes.load(ordering: .relaxed) }
    /// `*.progress` notifications not sent because their client was not reading.
    public var droppedProgressNotifications: Int { _droppedProgressNotifications.load(ordering: .relaxed) }
    /// Connections closed because their client stopped reading.
    public var slowReaderDisconnects: Int { _slowReaderDisconnects.load(ordering: .relaxed) }
    /// Connections accepted since start.
    public var connectionsAccepted: Int { _connectionsAccepted.load(ordering: .relaxed) }
    /// Responses (results and errors) queued since start.
    public var requestsAnswered: Int { _requestsAnswered.load(ordering: .relaxed) }

    func queued(_ delta: Int, connectionTotal: Int) {
        _queuedOutboundBytes.add(delta, ordering: .relaxed)
        if delta > 0 {
            _peakQueuedOutboundBytes.max(connectionTotal, ordering: .relaxed)
        }
    }

    func droppedProgress() { _droppedProgressNotifications.add(1, ordering: .relaxed) }
    func slowReaderDisconnected() { _slowReaderDisconnects.add(1, ordering: .relaxed) }
    func accepted() { _connectionsAccepted.add(1, ordering: .relaxed) }
    func answered() { _requestsAnswered.add(1, ordering: .relaxed) }
}
