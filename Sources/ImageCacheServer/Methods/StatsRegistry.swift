
/// The sections of `stats` (CONTRACT §5), filled by whichever part owns each figure.
///
/// This issue can measure only `sessions` and `uptimeSeconds`, so only those are reported:
/// a section appears when the feature that measures it registers here (the caches their
/// `memory`/`disk`, the transfer engine `network`, the providers `providers`). Reporting
/// zeros for figures nobody measures would be a lie a client cannot detect.
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
