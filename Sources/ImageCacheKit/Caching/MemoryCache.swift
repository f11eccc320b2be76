
/// A thread-safe, size-bounded LRU cache in memory: the first tier in front of the disk.
///
/// Bounded by **cost** (the caller states each value's size in bytes; the limit is
/// `memory_limit`) and optionally by count. Inserting past a bound evicts least recently
/// used entries until the cache fits again, so memory stays under the limit whatever the
/// load; a single value costlier than the whole limit is not kept at all. Every operation is
/// O(1) and holds one `Mutex` for a few dozen nanoseconds, so a get stays in the millions
/// per second on one core.
///
/// Counters (hits, misses, evictions) feed the `stats` method of the protocol.
///
/// `value(forKey:)` and `insert` are `@inlinable`: the server's own cache of inline answers
/// (`InlineDataCache`) is specialized for its types instead of going through generic
/// metadata on every hit.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var list: LRUList<Key, Value>
        @usableFromInline var costLimit: Int
        @usableFromInline var countLimit: Int?
        @usableFromInline var hits = 0
        @usableFromInline var misses = 0
        @usableFromInline var evictions = 0

        @inlinable
        init(list: LRUList<Key, Value>, costLimit: Int, countLimit: Int?) {
            self.list = list
            self.costLimit = costLimit
            self.countLimit = countLimit
        }
    }

    @usableFromInline let state: LockedState<State>

    /// A cache holding at most `costLimit` cost units (bytes) and, when given, at most
    /// `countLimit` entries.
    public init(costLimit: Int, countLimit: Int? = nil) {
        state = LockedState(State(list: LRUList(), costLimit: max(0, costLimit), countLimit: countLimit))
    }

    /// The value for `key`, marking it most recently used; counts a hit or a miss.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        state.withLock { state in
            if let value = state.list.touch(key) {
                state.hits += 1
                return value
            }
            state.misses += 1
            return nil
        }
    }

    /// Stores `value` as the most recently used entry, then evicts least recently used
    /// entries until both bounds hold. A value whose cost alone exceeds the limit is not
    /// stored (and any older value for `key` is dropped), since keeping it would evict
    /// everything else for one entry.
    @inlinable
    public func insert(_ value: Value, forKey key: Key, cost: Int) {
        // Evicted values are released after the lock is dropped: their deinit may be costly.
        var evicted: [Value] = []
        state.withLock { state in
            guard cost <= state.costLimit else {
                if let old = state.list.remove(key) { evicted.append(old) }
                return
            }
            if let old = state.list.insert(key, value, cost: max(0, cost)) { evicted.append(old) }
            Self.trim(&state, into: &evicted)
        }
        _ = evicted
    }

    /// Removes `key`; returns whether it was present.
    @discardableResult
    package func removeValue(forKey key: Key) -> Bool {
        let old = state.withLock { $0.list.remove(key) }
        return old != nil
    }

    /// Removes every entry whose key matches `predicate` (O(n): for `cache.evict`/`clear`,
    /// never on the request path). Returns how many were removed.
    @discardableResult
    public func removeAll(where predicate: (Key) -> Bool) -> Int {
        state.withLock { state in
            let doomed = state.list.keys.filter(predicate)
            for key in doomed { state.list.remove(key) }
            return doomed.count
        }
    }

    /// Removes every entry; the counters are kept (they describe the daemon's lifetime).
    public func removeAll() {
        state.withLock { $0.list.removeAll() }
    }

    /// Whether no value is kept under any of `keys`, without marking one used or counting:
    /// the index check that lets a caller skip reads it knows would miss (`countMisses`).
    package func holdsNone(of keys: [Key]) -> Bool {
        state.withLock { state in keys.allSatisfy { !state.list.contains($0) } }
    }

    /// Counts misses for reads a caller answered from `holdsNone` instead of making them, so
    /// the counters read the same either way.
    package func countMisses(_ count: Int) {
        state.withLock { $0.misses += count }
    }

    /// Changes the bounds (a SIGHUP with a new `memory_limit`), evicting at once if needed.
    package func setLimits(costLimit: Int, countLimit: Int?) {
        var evicted: [Value] = []
        state.withLock { state in
            state.costLimit = max(0, costLimit)
            state.countLimit = countLimit
            Self.trim(&state, into: &evicted)
        }
        _ = evicted
    }

    /// A consistent snapshot of the size and counters.
    public var statistics: CacheTierStatistics {
        state.withLock { state in
            CacheTierStatistics(entries: state.list.count, bytes: state.list.totalCost, limit: state.costLimit,
                                hits: state.hits, misses: state.misses, evictions: state.evictions)
        }
    }

    @inlinable
    static func trim(_ state: inout State, into evicted: inout [Value]) {
        while state.list.totalCost > state.costLimit
            || (state.countLimit.map { state.list.count > $0 } ?? false) {
            guard let victim = state.list.removeLeastRecent() else { break }
            evicted.append(victim.value)
            state.evictions += 1
        }
    }
}

/// Size and counters of one cache tier, as the `stats` method reports them.
public struct CacheTierStatistics: Sendable, Equatable {
    /// Entries held now.
    public var entries: Int
    /// Bytes held now (for the disk: content files plus their descriptions).
    public var bytes: Int
    /// The configured bound in bytes.
    public var limit: Int
    /// Lookups answered since start.
    public var hits: Int
    /// Lookups not answered since start (including expired entries read fresh, and entries
    /// dropped because their checksum did not match).
    package var misses: Int
    /// Entries removed to stay under the limit since start.
    package var evictions: Int

    /// A snapshot with the given figures (the caches build these; tests compare them).
    public init(entries: Int, bytes: Int, limit: Int, hits: Int, misses: Int, evictions: Int) {
        self.entries = entries
        self.bytes = bytes
        self.limit = limit
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
    }
}
