import ImageCacheKit
import Logging
import NIOCore

/// One client connection, and everything it owns (docs/protocol.md, "Sessions": a connection is a session).
///
/// The session is the single arbiter of "answered exactly once": a request is answered by
/// whoever takes it from the pending table first — its handler finishing (`claim`), `cancel`,
/// or nobody when the connection closes (then its task is cancelled and the answer has nowhere
/// to go). Later features hang their per-session state on it (`onClose`) so it dies with
/// the connection.
///
/// State lives behind a lock (`LockedState`): handlers finish on arbitrary threads while the event loop
/// admits new requests.
public final class Session: Sendable {
    /// Unique within the daemon's lifetime; appears in every log line about the session.
    public let id: UInt64
    /// Who is on the other end (SO_PEERCRED), when the kernel told us.
    public let peer: PeerCredentials?

    /// Who asks, for the rules of a shared daemon: the peer's identity, or a stranger when its
    /// credentials could not be read.
    package var requester: Requester {
        guard let peer else { return .stranger }
        return .peer(PeerIdentity(uid: peer.uid, gid: peer.gid, groups: peer.groups))
    }

    let channel: any Channel
    let logger: Logger
    private let state = LockedState(State())

    /// A pending unit of work: a request by its id, or a client notification by a serial.
    enum PendingKey: Hashable {
        case request(RequestID)
        case notification(UInt64)
    }

    /// Which pending entry a request holds, for `RequestContext.claimAnswer`.
    struct PendingEntry: Sendable {
        var key: PendingKey
        var serial: UInt64
    }

    /// What the session keeps about a pending entry besides its task.
    private struct Pending {
        var countsTowardCap: Bool
        /// Its answer is being sent; too late to cancel.
        var answered = false
        /// Its work was stopped (`cancelWork`): a task attached after that is cancelled as it
        /// arrives.
        var workCancelled = false
    }

    private struct State {
        /// The pending work, each entry with the task doing it (the session owns them).
        var pending = TaskTable<PendingKey, Pending, Void, Never>()
        var counted = 0
        var closed = false
        var inputClosed = false
        var draining = false
        var closeHandlers: [@Sendable () -> Void] = []
    }

    init(id: UInt64, peer: PeerCredentials?, channel: any Channel, logger: Logger) {
        self.id = id
        self.peer = peer
        self.channel = channel
        var logger = logger
        logger[metadataKey: "session"] = "\(id)"
        self.logger = logger
    }

    // MARK: Admission

    enum Admission {
        case admitted(serial: UInt64, key: PendingKey)
        case busy(cap: Int)
        case duplicateID
        case shuttingDown
        case closed
    }

    /// Reserves a pending entry for a request (id) or a notification (nil), or says why not.
    func admit(id: RequestID?, cap: Int?) -> Admission {
        state.withLock { state in
            if state.closed { return .closed }
            if state.draining { return .shuttingDown }
            if let id, let existing = state.pending[.request(id)] {
                // An answered request leaves the table just after its answer is queued, so a
                // client may legally reuse the id before that: the new request takes the
                // entry (the old one's `release` then finds another serial and does nothing).
                guard existing.entry.answered else { return .duplicateID }
                _ = state.pending.remove(.request(id))
                if existing.entry.countsTowardCap { state.counted -= 1 }
            }
            if let cap, state.counted >= cap { return .busy(cap: cap) }
            let key = { (serial: UInt64) -> PendingKey in id.map { .request($0) } ?? .notification(serial) }
            guard let serial = state.pending.reserve(Pending(countsTowardCap: cap != nil), keyedBy: key) else { return .closed }
            if cap != nil { state.counted += 1 }
            return .admitted(serial: serial, key: key(serial))
        }
    }

    /// Whether an immediate request may run: the session is open and no pending request
    /// uses the same id (which would make two answers with one id).
    func immediateAdmission(id: RequestID?) -> ImmediateAdmission {
        state.withLock { state in
            if state.closed { return .closed }
            // An entry already answered is on its way out (see `admit`): its id is free again.
            if let id, let existing = state.pending[.request(id)], !existing.entry.answered { return .duplicateID }
            return .admitted
        }
    }

    enum ImmediateAdmission {
        case admitted
        case duplicateID
        case closed
    }

    /// Records the task doing the admitted work, so `cancel` and closing can stop it. If the
    /// entry is already gone (cancelled in between), or its work was already stopped
    /// (`cancelWork`), the task is cancelled at once.
    func attach(_ task: Task<Void, Never>, key: PendingKey, serial: UInt64) {
        let cancelNow = state.withLock { state -> Bool in
            guard state.pending.attach(task, to: key, serial: serial) else { return true }
            return state.pending[key]?.entry.workCancelled == true
        }
        if cancelNow { task.cancel() }
    }

    /// Stops the work of pending entry `key`/`serial` (its task is cancelled, now or as it is
    /// attached) without answering it: for an owner that answered the request itself, such as
    /// the slot table recycling a slot's request. The entry leaves when its work ends.
    func cancelWork(key: PendingKey, serial: UInt64) {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard let slot = state.pending[key], slot.serial == serial else { return nil }
            state.pending.update(key, serial: serial) { $0.workCancelled = true }
            return slot.task
        }
        task?.cancel()
    }

    /// Claims the right to answer when the work is done: true when nobody cancelled it
    /// meanwhile. The entry stays pending (so the connection does not close under the answer)
    /// until `release`, which the caller invokes after queueing the answer.
    func claim(key: PendingKey, serial: UInt64) -> Bool {
        state.withLock { state in
            state.pending.update(key, serial: serial) { entry -> Bool in
                guard !entry.answered else { return false }
                entry.answered = true
                return true
            } ?? false
        }
    }

    /// Removes a finished entry (claimed or not). When it was the last pending work of a
    /// client that closed its input, the connection is closed after the queued answers.
    func release(key: PendingKey, serial: UInt64) {
        let closeNow = state.withLock { state -> Bool in
            guard let entry = state.pending.remove(key, serial: serial) else { return false }
            if entry.entry.countsTowardCap { state.counted -= 1 }
            return state.pending.isEmpty && state.inputClosed && !state.closed
        }
        if closeNow { closeAfterPendingWrites() }
    }

    /// How many requests and notifications are being worked on now.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    // MARK: Cancellation

    /// Takes the session's pending request `id` out and cancels its task, for `cancel`
    /// (`Session.cancel(id:)`, which answers it). Returns false when no such request is
    /// pending or its answer is already claimed.
    func withdraw(id: RequestID) -> Bool {
        let removed = state.withLock { state -> TaskTable<PendingKey, Pending, Void, Never>.Slot? in
            guard state.pending[.request(id)]?.entry.answered == false,
                  let entry = state.pending.remove(.request(id)) else { return nil }
            if entry.entry.countsTowardCap { state.counted -= 1 }
            return entry
        }
        guard let removed else { return false }
        removed.task?.cancel()
        return true
    }

    // MARK: Sending

    /// Sends a notification to this client. `*.progress` notifications may be dropped when
    /// the client reads slowly; all others are delivered or the connection is closed.
    public func notify<P: Encodable & Sendable>(method: String, params: P) {
        do {
            send(try MessageEncoder.notification(method: method, params: params))
        } catch {
            logger.error("a notification could not be encoded", metadata: ["method": "\(method)", "error": "\(error)"])
        }
    }

    /// Queues one line; the connection's `OutboundLimiter` applies the slow-reader policy.
    func send(_ message: OutboundMessage) {
        channel.writeAndFlush(message, promise: nil)
    }

    /// Queues lines in their order and flushes once: one write to the socket for all of them.
    func send(_ messages: [OutboundMessage]) {
        for message in messages { channel.write(message, promise: nil) }
        channel.flush()
    }

    // MARK: Lifetime

    /// Runs `handler` once when the session ends (at once if it already has). Whatever a
    /// feature keeps per session (slots, queued prefetches) is released here.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.closed { return true }
            state.closeHandlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Whether the connection has ended.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The client shut its writing side: no more requests will come, so the connection ends
    /// once every pending request is answered.
    func inputDidClose() {
        let closeNow = state.withLock { state -> Bool in
            state.inputClosed = true
            return state.pending.isEmpty && !state.closed
        }
        if closeNow { closeAfterPendingWrites() }
    }

    /// Refuses new work from now on (shutdown) and waits until the pending work is done.
    /// A cancelled caller stops waiting (the pending work goes on until the session closes).
    func drain() async {
        let drained = state.withLock { state in
            state.draining = true
            return state.pending.drained()
        }
        try? await drained.value()
    }

    /// The connection has ended: cancel everything the session owns. Nothing is answered;
    /// there is nobody left to read it.
    func didClose() {
        let (tasks, handlers) = state.withLock { state -> ([Task<Void, Never>], [@Sendable () -> Void]) in
            guard !state.closed else { return ([], []) }
            state.closed = true
            // Closing the table also releases `drain`.
            let tasks = state.pending.close()
            state.counted = 0
            let handlers = state.closeHandlers
            state.closeHandlers = []
            return (tasks, handlers)
        }
        tasks.cancelAll()
        for handler in handlers { handler() }
        if !tasks.isEmpty {
            logger.debug("session closed with work pending; cancelled", metadata: ["cancelled": "\(tasks.count)"])
        }
    }

    /// Closes once the lines already queued have been handed to the kernel.
    ///
    /// Always goes through the event loop's task queue, even from the event loop itself, so
    /// that answers other threads queued before this call are written before the close.
    func closeAfterPendingWrites() {
        let channel = self.channel
        channel.eventLoop.execute {
            channel.writeAndFlush(OutboundMessage(bytes: ByteBuffer(), priority: .response)).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }
}
