import ImageCacheKit

/// The sections of `stats` (CONTRACT §5), filled by whichever part owns each figure.
///
/// A section appears when the part that measures it registers here: the daemon its
/// `sessions` and `uptimeSeconds`, the caches `memory`/`disk` and the transfer engine
/// `network` (`CacheMethods`), the providers `providers` (`SearchMethods`). A daemon built
/// without a part reports no section for it rather than zeros a client could not tell from
/// real figures.
public final class StatsRegistry: Sendable {
    private let sections = LockedState<[(name: String, read: @Sendable () -> JSONValue)]>([])

    /// Empty: the daemon adds `sessions` and `uptimeSeconds`, features add theirs.
    public init() {}

    /// Adds (or replaces) the top-level member `name` of the `stats` result. `read` runs on
    /// an event loop (`stats` is answered inline), so it must only read figures already in
    /// memory — counters, sizes — and never wait.
    public func register(_ name: String, _ read: @escaping @Sendable () -> JSONValue) {
        sections.withLock { sections in
            sections.removeAll { $0.name == name }
            sections.append((name, read))
        }
    }

    /// Every registered figure, read now.
    public func snapshot() -> JSONValue {
        let readers = sections.withLock { $0 }
        var result: [String: JSONValue] = [:]
        for (name, read) in readers {
            result[name] = read()
        }
        return .object(result)
    }
}
