import ImageCacheKit
import Prometheus

/// A Prometheus counter that follows a running total kept elsewhere (the transfer engine's
/// `NetworkStats`, the pipeline's `ThumbnailLookups`, a provider's `ProviderStats`).
///
/// Those parts already count for `stats`; a second counter beside each, bumped at the same
/// places, would be a second copy of every figure in files other sessions own. Instead, at
/// scrape time the counter is advanced by what the total grew since the last scrape. A total
/// that went down (never expected) is taken as the new base and adds nothing: a counter
/// never decreases.
final class MirroredCounter: Sendable {
    private let counter: Prometheus.Counter
    private let last = LockedState<Int?>(nil)

    init(_ counter: Prometheus.Counter) {
        self.counter = counter
    }

    /// Advances the counter to `total`.
    func follow(_ total: Int) {
        let delta = last.withLock { last -> Int in
            defer { last = total }
            guard let previous = last else { return total }
            return total > previous ? total &- previous : 0
        }
        if delta > 0 { counter.increment(by: Int64(delta)) }
    }
}
