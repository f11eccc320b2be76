/// The tasks a type owns, by key: a session's pending requests, a session's slots, its queued
/// prefetches. Each entry is reserved before its task exists (so that the owner's bookkeeping
/// is decided in arrival order), gets its task attached later, and leaves exactly once:
/// removed by its own end, cancelled alone, or with all the others when the owner closes.
///
/// Why one type: every owner had the same serial check ("is this entry still the one I
/// reserved?"), the same orphan rule (a task attached to an entry already gone is cancelled at
/// once), the same close and the same wait for the table to empty, each written again.
///
/// A value type with no lock of its own, on purpose: it lives inside its owner's
/// `LockedState`, so that the owner decides the table and its other state (answers claimed,
/// messages ordered) under one lock. Nothing here cancels a task: the methods return the
/// tasks to cancel, and the owner cancels them after releasing its lock (a cancellation runs
/// handlers synchronously, which must never wait for that lock).
///
/// Inlinable: the slot table consults it on the memory-hit path, which must not pay for
/// unspecialised generic calls across the module boundary.
@frozen
public struct TaskTable<Key: Hashable, Entry, Success: Sendable, Failure: Error> {
    /// One owned piece of work.
    @frozen
    public struct Slot {
        /// Given at reservation, unique within the table: what a late `attach` or `remove`
        /// names, so it never touches a newer entry under the same key.
        public var serial: UInt64
        /// The owner's bookkeeping for the entry.
        public var entry: Entry
        /// The task doing the work, once attached.
        public var task: Task<Success, Failure>?

        @inlinable
        init(serial: UInt64, entry: Entry) {
            self.serial = serial
            self.entry = entry
        }
    }

    @usableFromInline var slots: [Key: Slot] = [:]
    @usableFromInline var nextSerial: UInt64 = 0
    @usableFromInline var closed = false
    @usableFromInline var emptied: SharedOutcome<Void, Never>?

    /// An empty, open table.
    @inlinable
    public init() {}

    /// Entries now.
    @inlinable public var count: Int { slots.count }
    /// Whether no entry is left.
    @inlinable public var isEmpty: Bool { slots.isEmpty }
    /// Whether the table was closed (it takes no more entries).
    @inlinable public var isClosed: Bool { closed }
    /// The keys with an entry now.
    @inlinable public var keys: Dictionary<Key, Slot>.Keys { slots.keys }

    /// The entry under `key`, if any.
    @inlinable
    public subscript(key: Key) -> Slot? { slots[key] }

    /// Reserves `key` for new work, replacing whatever entry was there (which the caller took
    /// out first if it cares: `remove`).
    /// - Returns: the new entry's serial, or nil when the table is closed.
    @inlinable
    public mutating func reserve(_ key: Key, _ entry: Entry) -> UInt64? {
        reserve(entry, keyedBy: { _ in key })
    }

    /// Reserves new work under a key made from its serial (work that has no name of its own,
    /// such as a client's notification).
    /// - Returns: the new entry's serial, or nil when the table is closed.
    @inlinable
    public mutating func reserve(_ entry: Entry, keyedBy key: (UInt64) -> Key) -> UInt64? {
        guard !closed else { return nil }
        nextSerial &+= 1
        slots[key(nextSerial)] = Slot(serial: nextSerial, entry: entry)
        return nextSerial
    }

    /// Hands the entry `key`/`serial` its task.
    /// - Returns: false when that entry is gone (cancelled, replaced, closed): the caller then
    ///   cancels the task, once its lock is released.
    @inlinable
    public mutating func attach(_ task: Task<Success, Failure>, to key: Key, serial: UInt64) -> Bool {
        guard var slot = slots[key], slot.serial == serial else { return false }
        slot.task = task
        slots[key] = slot
        return true
    }

    /// Changes the bookkeeping of entry `key`/`serial` (nil serial: whichever entry is there).
    /// - Returns: what `change` returned, or nil when no such entry was there.
    @inlinable
    @discardableResult
    public mutating func update<Result>(_ key: Key, serial: UInt64? = nil, _ change: (inout Entry) -> Result) -> Result? {
        // A plain read and store: the optional-chained `slots[key]?.entry` goes through the
        // dictionary's `_modify` coroutine, whose frame is allocated on each call.
        guard var slot = slots[key], serial == nil || slot.serial == serial else { return nil }
        let result = change(&slot.entry)
        slots[key] = slot
        return result
    }

    /// Takes entry `key` out (only the one with `serial`, when given). Its task, if the
    /// caller means to stop the work, is the caller's to cancel after its lock is released.
    /// - Returns: the removed entry.
    @inlinable
    public mutating func remove(_ key: Key, serial: UInt64? = nil) -> Slot? {
        guard let slot = slots[key], serial == nil || slot.serial == serial else { return nil }
        slots[key] = nil
        if slots.isEmpty { settleEmptied() }
        return slot
    }

    /// Takes out every entry whose key matches.
    /// - Returns: the removed entries with their keys.
    @inlinable
    public mutating func removeAll(where matches: (Key) -> Bool) -> [(key: Key, slot: Slot)] {
        let keys = slots.keys.filter(matches)
        let removed = keys.compactMap { key in slots.removeValue(forKey: key).map { (key, $0) } }
        if slots.isEmpty { settleEmptied() }
        return removed
    }

    /// Closes the table (the owner ended): every entry is taken out and no new one is taken.
    /// - Returns: the tasks to cancel once the caller's lock is released.
    @inlinable
    public mutating func close() -> [Task<Success, Failure>] {
        closed = true
        let tasks = slots.values.compactMap(\.task)
        slots = [:]
        settleEmptied()
        return tasks
    }

    /// What settles once the table is empty (at once if it is): await its `value()` after
    /// releasing the lock to wait until every entry has left, by its end, a cancellation or
    /// the close. The same outcome for every caller. It is settled under the owner's lock,
    /// which is safe: settling only schedules the waiters, it runs none of their code.
    @inlinable
    public mutating func drained() -> SharedOutcome<Void, Never> {
        let outcome = emptied ?? SharedOutcome()
        if slots.isEmpty {
            outcome.settle(())
        } else {
            emptied = outcome
        }
        return outcome
    }

    /// The table just emptied: whoever awaits it is released, and a later wait (after new
    /// entries came) gets a fresh outcome.
    @inlinable
    mutating func settleEmptied() {
        emptied?.settle(())
        emptied = nil
    }
}

extension Sequence {
    /// Cancels every task of the sequence (those a `TaskTable` handed back).
    @inlinable
    public func cancelAll<Success: Sendable, Failure: Error>() where Element == Task<Success, Failure> {
        for task in self { task.cancel() }
    }
}
