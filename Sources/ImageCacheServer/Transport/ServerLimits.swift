/// The bounds the server enforces on every connection.
///
/// `maxRequestBytes` and `maxPendingPerSession` come from `cache.conf` (`[daemon]`) and may
/// change on SIGHUP (new connections and new requests see the new values). The outbound
/// bounds are not configurable: they only need to be far above what a reading client ever
/// has queued and far below what would hurt the machine.
public struct ServerLimits: Sendable, Equatable {
    /// Longest request line (`max_request_bytes`); longer → -32600 and the connection closes.
    public var maxRequestBytes: Int
    /// Pending requests per session (`max_pending_per_session`); more → 1012 `busy`.
    public var maxPendingPerSession: Int
    /// Queued outbound bytes past which `*.progress` notifications are dropped and the
    /// connection stops reading new requests until its client catches up.
    public var outboundSoftLimit: Int
    /// Queued outbound bytes past which the connection is closed (and logged). One message
    /// larger than this still goes out to a client that has nothing else queued.
    public var outboundHardLimit: Int

    /// 256 KiB before dropping progress, 4 MiB before disconnecting: a client that reads
    /// never gets near either (the kernel's socket buffer absorbs the first ~200 KiB).
    public init(maxRequestBytes: Int = 1 << 20, maxPendingPerSession: Int = 256,
                outboundSoftLimit: Int = 256 << 10, outboundHardLimit: Int = 4 << 20) {
        self.maxRequestBytes = maxRequestBytes
        self.maxPendingPerSession = maxPendingPerSession
        self.outboundSoftLimit = outboundSoftLimit
        self.outboundHardLimit = outboundHardLimit
    }
}
