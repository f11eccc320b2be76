import DequeModule
import ImageCacheProtocol

/// Admits decodes by what they will cost, so decode memory is a budget, not a hope, and a
/// visible thumbnail never waits behind a hostile decode for more than an ordinary decode.
///
/// Every decode asks for its `DecodeCost` (bytes computed from the header before any work,
/// CPU work in block visits) and holds it until it ends. Three bounds hold at every moment:
/// - **memory**: the held bytes never exceed `memory` (`decode_memory`); a decode that could
///   never be admitted is refused at once as `too_large`, saying why;
/// - **CPU**: at most `slots` decodes run at once (one per core, at least 2);
/// - **lanes**: a *heavy* decode (more than `reserve` bytes or `DecodeCost.ordinaryWork`) runs
///   in a lane of `slots − 1` slots and `memory − reserve` bytes. An ordinary decode therefore
///   always finds a slot and `reserve` bytes that no heavy decode can hold: it waits at most
///   for other ordinary decodes, whatever the heavy ones are doing.
///
/// Waiters are served first come, first served within their lane (an ordinary decode passes a
/// heavy one that cannot start, never the reverse among its own lane). A heavy waiter that
/// is short only of memory keeps ordinary decodes from taking the bytes it waits for (beyond
/// the reserve), so a stream of small decodes cannot starve it. A waiting task that is
/// cancelled leaves the queue at once with `CancellationError` (a recycled slot must not wait
/// for a decode it no longer wants).
///
/// Each waiter waits on a `SharedOutcome` of its own (its admission), settled under this
/// budget's lock at the moment the queue decides it: so a waiter cancelled at that same
/// moment knows for certain whether it was admitted (and gives the permit back) or not.
public final class DecodeBudget: Sendable {
    private struct Waiter {
        var cost: DecodeCost
        var heavy: Bool
        /// Admitted (success) or refused as never fitting (`too_large`), once.
        var admission: SharedOutcome<Void, ImagingError>
    }

    private struct State {
        var memory: Int
        var usedBytes = 0
        var usedSlots = 0
        var heavyBytes = 0
        var heavySlots = 0
        var waiters: Deque<Waiter> = []
        var ended = 0
    }

    /// What an admitted decode holds; give it back with `release(_:)`. Its lane is fixed at
    /// admission, so a reload that moves the heavy threshold cannot skew the accounting.
    public struct Permit: Sendable {
        /// The cost admitted.
        public let cost: DecodeCost
        /// Whether it runs in the heavy lane.
        package let heavy: Bool
    }

    private let state: LockedState<State>
    /// Decodes allowed at once, heavy or not (the CPU bound).
    public let slots: Int

    /// - Parameters:
    ///   - memory: the bytes all decodes together may hold (`decode_memory`).
    ///   - slots: decodes allowed at once; the machine's core count is the natural choice,
    ///     since decodes are CPU-bound. At least 2, so the heavy lane never takes them all.
    public init(memory: Int, slots: Int) {
        self.slots = max(2, slots)
        state = LockedState(State(memory: max(1, memory)))
    }

    /// Decodes that ended (permits given back) since the budget was made: after them the
    /// heap holds their freed buffers, which `HeapTrimmer` gives back once decoding pauses.
    package var ended: Int { state.withLock { $0.ended } }

    /// The bytes all decodes together may hold.
    public var memory: Int { state.withLock { $0.memory } }

    /// Bytes no heavy decode may take: an eighth of `memory`, what an ordinary decode gets.
    package var reserve: Int { Self.reserve(of: memory) }
    private static func reserve(of memory: Int) -> Int { memory / 8 }

    /// Whether `cost` makes a decode heavy (it then runs in the heavy lane).
    package func isHeavy(_ cost: DecodeCost) -> Bool {
        cost.bytes > reserve || cost.work > DecodeCost.ordinaryWork
    }

    /// Changes the budget (a reloaded `decode_memory`): decodes running keep what they hold,
    /// waiters are admitted or refused under the new total.
    package func apply(memory: Int) {
        state.withLock { state in
            state.memory = max(1, memory)
            drain(&state)
        }
        queueChanges.update { $0 &+= 1 }
    }

    /// Runs `body` once `cost` is admitted, and releases it when `body` returns or throws.
    ///
    /// `body` runs on the caller's executor (`nonisolated(nonsending)`), so an actor can
    /// decode under the budget while touching its own state, without making the body Sendable.
    /// - Throws: as `acquire`; `body`'s errors.
    nonisolated(nonsending)
    package func withPermit<T>(_ cost: DecodeCost, _ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        let permit = try await acquire(cost)
        defer { release(permit) }
        return try await body()
    }

    /// Waits until `cost` fits, then holds it. Pair every successful call with `release(_:)`.
    /// - Throws: `too_large` at once when `cost` could never be admitted (over the heavy lane's
    ///   `memory − reserve`); `CancellationError` if the task is cancelled while waiting.
    @discardableResult
    nonisolated(nonsending)
    package func acquire(_ cost: DecodeCost) async throws -> Permit {
        try Task.checkCancellation()
        let heavy = isHeavy(cost)
        let permit = Permit(cost: cost, heavy: heavy)
        let admission = SharedOutcome<Void, ImagingError>()
        state.withLock { state in
            state.waiters.append(Waiter(cost: cost, heavy: heavy, admission: admission))
            drain(&state)
        }
        queueChanges.update { $0 &+= 1 }
        do {
            try await withTaskCancellationHandler {
                try await admission.value()
            } onCancel: {
                // Out of the queue at once, on the cancelling thread: it may have been a
                // lane's head that held others back.
                leave(admission)
            }
        } catch is CancellationError {
            // Decided before the cancellation reached the queue: an admitted permit goes back.
            leave(admission)
            if case .success? = admission.outcome { release(permit) }
            throw CancellationError()
        }
        return permit
    }

    /// Takes a cancelled waiter out of the queue if it is still there, admitting whoever the
    /// queue can then admit.
    private func leave(_ admission: SharedOutcome<Void, ImagingError>) {
        let left = state.withLock { state -> Bool in
            guard let index = state.waiters.firstIndex(where: { $0.admission === admission }) else { return false }
            state.waiters.remove(at: index)
            drain(&state)
            return true
        }
        if left { queueChanges.update { $0 &+= 1 } }
    }

    /// Gives back what `acquire` took, admitting whoever now fits.
    public func release(_ permit: Permit) {
        state.withLock { state in
            state.usedBytes -= permit.cost.bytes
            state.usedSlots -= 1
            state.ended &+= 1
            if permit.heavy {
                state.heavyBytes -= permit.cost.bytes
                state.heavySlots -= 1
            }
            drain(&state)
        }
        queueChanges.update { $0 &+= 1 }
    }

    /// Admits every waiter that fits, in order, lane by lane; refuses those that can never fit.
    /// Called under the lock, and settles each decided waiter's admission there (settling
    /// only schedules the waiting task; it runs, and takes the lock, after this returns).
    private func drain(_ state: inout State) {
        let reserve = Self.reserve(of: state.memory)
        var ordinaryBlocked = false, heavyBlocked = false
        // Bytes a heavy head waits for (only memory holds it back): ordinary decodes leave them.
        var heldForHeavy = 0
        var index = 0
        while index < state.waiters.count {
            let waiter = state.waiters[index]
            let bytes = waiter.cost.bytes
            if waiter.heavy {
                if bytes > state.memory - reserve {
                    state.waiters.remove(at: index).admission.settle(.failure(Self.neverFits(waiter.cost, memory: state.memory)))
                    continue
                }
                if !heavyBlocked {
                    let slotFree = state.usedSlots < slots && state.heavySlots < slots - 1
                    let memoryFree = state.heavyBytes + bytes <= state.memory - reserve
                        && state.usedBytes + bytes <= state.memory
                    if slotFree && memoryFree {
                        state.usedSlots += 1; state.usedBytes += bytes
                        state.heavySlots += 1; state.heavyBytes += bytes
                        state.waiters.remove(at: index).admission.settle(.success(()))
                        continue
                    }
                    heavyBlocked = true
                    if state.heavySlots < slots - 1 && state.heavyBytes + bytes <= state.memory - reserve { heldForHeavy = bytes }
                }
            } else if !ordinaryBlocked {
                if state.usedSlots < slots && state.usedBytes + bytes <= state.memory - heldForHeavy {
                    state.usedSlots += 1; state.usedBytes += bytes
                    state.waiters.remove(at: index).admission.settle(.success(()))
                    continue
                }
                ordinaryBlocked = true
            }
            if ordinaryBlocked && heavyBlocked { break }
            index += 1
        }
    }

    /// The `too_large` answer for a decode the budget can never admit.
    static func neverFits(_ cost: DecodeCost, memory: Int) -> ImagingError {
        .needsMoreMemory(bytes: cost.bytes, budget: memory - reserve(of: memory), decodeMemory: memory)
    }

    /// Slots free right now (for stats and tests).
    package var available: Int { state.withLock { slots - $0.usedSlots } }

    /// Bytes held by running decodes right now (for stats and tests).
    package var heldBytes: Int { state.withLock { $0.usedBytes } }

    /// Heavy decodes running right now (for stats and tests).
    package var heavyRunning: Int { state.withLock { $0.heavySlots } }

    /// Tasks waiting right now (for stats and tests).
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Bumped whenever a task joins or leaves the queue or a decode starts or ends: the event
    /// a watcher waits on (`queueChanges.wait { _ in budget.waiting >= n }`) instead of
    /// polling `waiting`.
    package let queueChanges = Observed(0)
}
