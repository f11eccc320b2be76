import ImageCacheKit
import Logging

/// A slot's name within a session: slots are numbered per view (docs/protocol.md, "thumbnail.show", `view`).
struct SlotKey: Hashable, Sendable, CustomStringConvertible {
    var view: String
    var slot: Int

    var description: String { "\(view)#\(slot)" }
}

/// What a `thumbnail.show` holds on its slot from arrival on: the slot and the generation it
/// was given. Every answer and notification for the request is checked against it.
struct SlotTicket: Sendable {
    var key: SlotKey
    var generation: UInt64
    /// Whether the session was flinging when the request arrived: such a request, if it must
    /// go to the network, waits for the fling to end (`FlingHold`). Decided at arrival, in
    /// arrival order, so how late the request's task happens to run changes nothing.
    var arrivedDuringFling: Bool
}

/// One session's slots, and the single place that decides what may still be sent for them.
///
/// The rule it enforces is the contract's *no late results*: once a slot is recycled or shown
/// again, nothing for its earlier request — result, `thumbnail.progress`,
/// `thumbnail.dimensions` — ever reaches the client, even when the fetch completes at the
/// same instant. Every slot change takes a new generation under this table's one lock, and
/// every message for a slot is decided under that lock only while its generation is current
/// (and written in the order decided, below).
/// Whether a request is answered at all is decided by `Session.claim` (the arbiter of
/// "answered exactly once", shared with `cancel` and the session's close), also under the
/// lock, so "deliver" and "recycle" can never both win.
///
/// Messages decided under the lock are never written under it: a write that closes the
/// connection runs the session's close handlers, which take this lock. A message decided on
/// a thread other than the connection's event loop is queued on the loop (`execute`), which
/// writes such messages in the order they were decided. One decided on the loop itself (a
/// memory hit answered on arrival, the common case) is written by the caller as soon as the
/// lock is released, with no trip through the loop's task queue — but only while no queued
/// message of this table is still waiting there, so it can never overtake one decided before
/// it (a `thumbnail.progress` for the slot's previous photo, say).
///
/// A slot's request is loaded by the request's own task, which its session owns: recycling
/// the slot stops that task through the session (`RequestContext.cancelWork`), with no task
/// of the slot's own nested inside it. Work is stopped only after the lock is released: a
/// cancellation runs handlers synchronously (the pipeline withdraws the demand), and those
/// must never wait for us.
final class SlotTable: Sendable {
    /// A slot's entry: the `thumbnail.show` request it is loading for (its claim and its
    /// work), and its generation (the serial). The table attaches no task: the request's task
    /// is its session's.
    private typealias Entries = TaskTable<SlotKey, RequestContext, Void, Never>

    private struct State {
        /// Slots with a request still pending (loading or held); delivered slots leave.
        var entries = Entries()
        var fling = FlingDetector<ContinuousClock.Instant>()
        /// Lines decided off the event loop and not written yet, in the order decided: the
        /// one turn of the loop queued for the first writes all of them, so lines decided
        /// back to back (a shared-tier answer's `thumbnail.dimensions` and its result) cost
        /// one wake-up of the loop and one write.
        var outbox: [OutboundMessage] = []
    }

    private let state = LockedState(State())
    private let session: Session
    private let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameter now: the clock the fling detector reads (tests may pass their own).
    init(session: Session, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.session = session
        self.now = now
    }

    // MARK: Slot changes (arrival order)

    /// Records that `key` now shows the request of `context`. A request still pending on the
    /// slot is recycled: it answers 1007 `recycled` (if nobody answered it yet), nothing more
    /// is ever sent for it, its task is cancelled, and the recycle counts towards a fling.
    func show(_ key: SlotKey, context: RequestContext) -> SlotTicket {
        let (ticket, recycled, direct) = state.withLock { state -> (SlotTicket, Entries.Slot?, OutboundMessage?) in
            // Read, not removed: `reserve` below replaces it in place (one hash, no re-insert).
            let previous = state.entries[key]
            let instant = now()
            var direct: OutboundMessage?
            if let previous {
                state.fling.recordRecycle(at: instant)
                direct = answerRecycled(previous.entry, &state).direct
            }
            // A closed table takes no entry: generation 0 is never current, so nothing is sent
            // for the request (its session, closed too, cancels its task).
            let generation = state.entries.reserve(key, context) ?? 0
            let ticket = SlotTicket(key: key, generation: generation,
                                    arrivedDuringFling: state.fling.isFlinging(at: instant))
            return (ticket, previous, direct)
        }
        // The work is stopped before the 1007 is written: a client that reads it may reuse the
        // request's id at once, and the session then holds another entry under that id.
        recycled?.entry.cancelWork()
        write(direct)
        return ticket
    }

    /// `thumbnail.recycle`: the slot's pending request answers 1007 `recycled` and its task is
    /// cancelled. The recycle's own answer (`{cancelled}`) is claimed and sent under the same
    /// lock, so on the wire it follows everything sent for the slot before it.
    /// - Returns: whether a pending request was recycled.
    @discardableResult
    func recycle(_ key: SlotKey, context: RequestContext) -> Bool {
        let (cancelled, recycled, direct) = state.withLock { state -> (Bool, Entries.Slot?, [OutboundMessage]) in
            let previous = state.entries.remove(key)
            var cancelled = false
            var direct: [OutboundMessage] = []
            if let previous {
                state.fling.recordRecycle(at: now())
                let answered = answerRecycled(previous.entry, &state)
                cancelled = answered.claimed
                if let message = answered.direct { direct.append(message) }
            }
            let answer = Answer.result(CancelledResult(cancelled: cancelled), context: context)
            if context.claimAnswer(outcome: answer.outcome), let id = context.requestID,
               let message = route(answer.line(id), &state) {
                direct.append(message)
            }
            return (cancelled, previous, direct)
        }
        recycled?.entry.cancelWork()
        direct.forEach(write)
        return cancelled
    }

    /// Claims and answers a superseded request with 1007 `recycled`; `claimed` is false when
    /// someone else (`cancel`, a close) took it first. Called under the lock; `direct` is the
    /// answer for the caller to write once the lock is released (see `route`).
    private func answerRecycled(_ context: RequestContext, _ state: inout State) -> (claimed: Bool, direct: OutboundMessage?) {
        let answer = Answer.refusal(ServerError(.slotRecycled))
        guard context.claimAnswer(outcome: answer.outcome) else { return (false, nil) }
        guard let id = context.requestID else { return (true, nil) }
        return (true, route(answer.line(id), &state))
    }

    // MARK: The request's own progress

    /// Sends a notification for the request of `ticket`, only while it is still the slot's.
    func notify(_ message: OutboundMessage, for ticket: SlotTicket) {
        let direct = state.withLock { state -> OutboundMessage? in
            guard state.entries[ticket.key]?.serial == ticket.generation else { return nil }
            return route(message, &state)
        }
        write(direct)
    }

    /// Ends the request of `ticket` with `answer` (its result or error), only while it is
    /// still the slot's and nobody else answered it. Returns whether it was the slot's.
    func finish(_ ticket: SlotTicket, _ answer: Answer) -> Bool {
        finish(ticket, outcome: answer.outcome, line: answer.line)
    }

    /// `finish` with a success whose line its method writes itself (`Answer.success`), made
    /// under the lock by a closure that is never stored: the memory hit's form, which
    /// allocates nothing for its answer.
    func finish(_ ticket: SlotTicket, success line: (RequestID) -> OutboundMessage) -> Bool {
        finish(ticket, outcome: Answer.ok, line: line)
    }

    private func finish(_ ticket: SlotTicket, outcome: String, line: (RequestID) -> OutboundMessage) -> Bool {
        let (current, direct) = state.withLock { state -> (Bool, OutboundMessage?) in
            guard let slot = state.entries.remove(ticket.key, serial: ticket.generation) else { return (false, nil) }
            guard slot.entry.claimAnswer(outcome: outcome), let id = slot.entry.requestID else { return (true, nil) }
            return (true, route(line(id), &state))
        }
        write(direct)
        return current
    }

    // MARK: Flings

    /// When the session's current fling ends (if nobody recycles more), or nil when it is not
    /// flinging now.
    func flingEnd() -> ContinuousClock.Instant? {
        state.withLock { $0.fling.flingEnd(at: now()) }
    }

    /// Slots with a request pending now (loading or held).
    var pendingCount: Int { state.withLock { $0.entries.count } }

    // MARK: Lifetime

    /// The session ended: the slots are forgotten and nothing more is sent, there is nobody
    /// left to read it (the session cancels its requests' tasks, withdrawing their demands).
    func close() {
        state.withLock { _ = $0.entries.close() }
    }

    // MARK: Sending

    /// Decides, under the lock, how a line reaches the connection. On the event loop with
    /// nothing of ours still queued there, it is returned for the caller to `write` once the
    /// lock is released: nothing decided before it can be pending, and nothing decided after it
    /// can be written before it (other threads queue behind the loop's current work). Otherwise
    /// it joins the outbox, which the loop writes in the order the lines were decided.
    private func route(_ message: OutboundMessage, _ state: inout State) -> OutboundMessage? {
        let session = self.session
        if state.outbox.isEmpty, session.channel.eventLoop.inEventLoop { return message }
        state.outbox.append(message)
        // The loop's turn queued for an earlier line, not run yet, writes this one too.
        guard state.outbox.count == 1 else { return nil }
        session.channel.eventLoop.execute { [self] in
            var lines: [OutboundMessage] = []
            self.state.withLock { swap(&lines, &$0.outbox) }
            session.send(lines)
        }
        return nil
    }

    /// Writes a line `route` returned, outside the lock.
    private func write(_ message: OutboundMessage?) {
        if let message { session.send(message) }
    }
}
