import ImageCacheKit

/// The figures of `stats` (docs/protocol.md, `stats`), filled by whichever part owns each.
///
/// Each part registers what it measures, writing its members of the protocol's own
/// `StatsResult`: the daemon `sessions` and `uptimeSeconds`, the caches `memory`/`disk` and
/// the transfer engine `network` (`CacheMethods`), the providers `providers`
/// (`SearchMethods`). The daemon registers every part, so every member is a real figure; a
/// server built for a test without some part leaves its members at zero.
public final class StatsRegistry: Sendable {
    private let parts = LockedState<[(name: String, fill: @Sendable (inout StatsResult) -> Void)]>([])

    /// Empty: the daemon adds `sessions` and `uptimeSeconds`, features add theirs.
    public init() {}

    /// Adds (or replaces) the part `name`, which writes its members with `fill`. `fill` runs
    /// on an event loop (`stats` is answered inline), so it must only read figures already in
    /// memory — counters, sizes — and never wait.
    public func register(_ name: String, _ fill: @escaping @Sendable (inout StatsResult) -> Void) {
        parts.withLock { parts in
            parts.removeAll { $0.name == name }
            parts.append((name, fill))
        }
    }

    /// Every registered figure, read now.
    public func snapshot() -> StatsResult {
        let fills = parts.withLock { $0 }
        var result = StatsResult.zero
        for (_, fill) in fills { fill(&result) }
        return result
    }
}

extension StatsResult {
    /// Every figure zero: what `StatsRegistry` starts from.
    static let zero = StatsResult(
        memory: .init(entries: 0, bytes: 0, limit: 0, hits: 0, misses: 0),
        disk: .init(entries: 0, bytes: 0, limit: 0, hits: 0, misses: 0),
        network: .init(inFlight: 0, queued: 0, requests: 0, bytesReceived: 0, bytesDiscarded: 0),
        providers: [:], sessions: 0, uptimeSeconds: 0)
}
