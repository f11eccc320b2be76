/// The parties that want one piece of work, each with a priority: the work runs at the highest
/// of them, and when the last one leaves before the work has ended, the work is cancelled.
///
/// Why: N clients wanting the same thumbnail must cost one download that runs as urgently as
/// the most urgent of them (a prefetch joined by a visible slot jumps the queue), and nobody
/// wanting it any more must cost none (bytes stop flowing at once). The group does not start
/// the work; its owner does, then `attach`es the two things the group may do to it.
///
/// Race-free by one lock (`LockedState`) over the members, the priority and the attached
/// work; the work's `setPriority` and `cancel` are called after it is released.
public final class DemandGroup<ID: Hashable & Sendable, Priority: Comparable & Sendable, Member: Sendable>: Sendable {
    /// What the group may do to the work it stands for.
    public struct Work: Sendable {
        /// Moves the work to another priority (raised by a join, lowered by a withdrawal).
        public var setPriority: @Sendable (Priority) -> Void
        /// Stops the work: the last member left before it ended.
        public var cancel: @Sendable () -> Void

        /// The two actions, as closures over the owner's handle.
        public init(setPriority: @escaping @Sendable (Priority) -> Void, cancel: @escaping @Sendable () -> Void) {
            self.setPriority = setPriority
            self.cancel = cancel
        }
    }

    private struct State {
        var members: [ID: (priority: Priority, member: Member)] = [:]
        var priority: Priority
        var work: Work?
        var abandoned = false
        var ended = false
    }

    private let state: LockedState<State>

    /// What a withdrawal does to the work, decided under the lock and done after it.
    private enum WithdrawalStep { case none, lower(Priority, Work?), abandon(Work?) }

    /// An empty group whose work will start at `priority` (the first member's, usually).
    public init(priority: Priority) {
        state = LockedState(State(priority: priority))
    }

    /// Adds a member (or replaces the one with the same id); raises the work's priority when
    /// this member's is higher.
    /// - Returns: false when the group was abandoned (its last member left before the end):
    ///   the caller starts another.
    @discardableResult
    public func join(_ id: ID, priority: Priority, member: Member) -> Bool {
        let (joined, raise) = state.withLock { s -> (Bool, Work?) in
            guard !s.abandoned else { return (false, nil) }
            s.members[id] = (priority, member)
            guard priority > s.priority else { return (true, nil) }
            s.priority = priority
            return (true, s.work)
        }
        raise?.setPriority(priority)
        return joined
    }

    /// Removes a member (a no-op for one not in the group). The last one out before the work
    /// ended abandons the group and cancels the work; otherwise the priority follows the
    /// highest member left.
    /// - Returns: true when this withdrawal abandoned the group (its owner forgets it).
    @discardableResult
    public func withdraw(_ id: ID) -> Bool {
        let step = state.withLock { s -> WithdrawalStep in
            guard s.members.removeValue(forKey: id) != nil else { return .none }
            if s.members.isEmpty {
                guard !s.ended else { return .none }
                s.abandoned = true
                return .abandon(s.work)
            }
            let highest = s.members.values.lazy.map(\.priority).max() ?? s.priority
            guard highest != s.priority else { return .none }
            s.priority = highest
            return .lower(highest, s.work)
        }
        switch step {
        case .none: return false
        case .lower(let priority, let work): work?.setPriority(priority); return false
        case .abandon(let work): work?.cancel(); return true
        }
    }

    /// Hands the group its work, started at `priority` (read from `priority` before the work
    /// existed); cancels it at once when every member left meanwhile, and moves it to the
    /// group's priority when a join or withdrawal changed that in between (nothing had the
    /// work to move then).
    public func attach(_ work: Work, startedAt priority: Priority) {
        let (abandoned, moved) = state.withLock { s -> (Bool, Priority?) in
            s.work = work
            return (s.abandoned, s.priority != priority ? s.priority : nil)
        }
        if abandoned {
            work.cancel()
        } else if let moved {
            work.setPriority(moved)
        }
    }

    /// The work has its outcome: from now on the last member out cancels nothing.
    public func end() {
        state.withLock { $0.ended = true }
    }

    /// The priority the work should run at now: the highest member's (the initial one while
    /// the group is empty).
    public var priority: Priority { state.withLock { $0.priority } }

    /// Members now.
    public var count: Int { state.withLock { $0.members.count } }

    /// Whether the last member left before the work ended.
    public var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// The members now (in no particular order), e.g. to send each an event.
    public var members: [Member] { state.withLock { $0.members.values.map(\.member) } }
}
