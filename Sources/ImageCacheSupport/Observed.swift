/// A value that changes elsewhere and that a caller can await a condition on, woken by the
/// change itself instead of looking again every few milliseconds.
///
/// Why: tests (and callers such as a typeahead harness) need "wait until two searches are
/// pending" or "until a batch has been written"; polling such state either sleeps longer than
/// needed or burns a core, and on a loaded 2-core machine both make tests slow and flaky. The
/// owner of the state publishes each new value after changing it (outside its own lock), and
/// every waiter whose condition now holds is resumed. Conditions run under this type's lock,
/// on the publishing thread, so they must be quick and must not publish.
public final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: UInt64
        let condition: @Sendable (Value) -> Bool
        let met: SharedOutcome<Void, Never>
    }

    private struct State {
        var value: Value
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state: LockedState<State>

    /// Starts at `initial`.
    public init(_ initial: Value) {
        state = LockedState(State(value: initial))
    }

    /// The current value.
    public var value: Value { state.withLock { $0.value } }

    /// Replaces the value and resumes every waiter whose condition holds for it.
    public func publish(_ value: Value) {
        update { $0 = value }
    }

    /// Changes the value in place (`count += 1`) and resumes every waiter whose condition holds.
    public func update(_ change: (inout Value) -> Void) {
        let ready = state.withLock { s -> [SharedOutcome<Void, Never>] in
            change(&s.value)
            let value = s.value
            var ready: [SharedOutcome<Void, Never>] = []
            s.waiters.removeAll { waiter in
                guard waiter.condition(value) else { return false }
                ready.append(waiter.met)
                return true
            }
            return ready
        }
        for met in ready { met.settle(()) }
    }

    /// Returns once `condition` holds for the value (at once if it already does).
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func wait(until condition: @escaping @Sendable (Value) -> Bool) async throws {
        let met = SharedOutcome<Void, Never>()
        // Checked and registered under the lock: a publish cannot slip in between.
        let id = state.withLock { s -> UInt64? in
            if condition(s.value) { return nil }
            s.nextID &+= 1
            s.waiters.append(Waiter(id: s.nextID, condition: condition, met: met))
            return s.nextID
        }
        guard let id else { return }
        do {
            try await met.value()
        } catch {
            state.withLock { $0.waiters.removeAll { $0.id == id } }
            throw error
        }
    }
}
