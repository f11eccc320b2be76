import ImageCacheSupport
import NIOCore
import NIOPosix
import Synchronization

/// One memcached server: a few pipelined connections, made on first use and remade after
/// they end, and the node's health.
///
/// A request made on one of NIO's event loops goes over a connection of that loop's own
/// (made on its first request there): it is written at once, and its answer is read and
/// settled on the same thread, so a caller on a loop (the daemon answering a client) waits
/// for the server alone, not also for another loop's thread to wake. Requests from anywhere
/// else share the node's round-robin connections on the client's group.
///
/// Health is a count of consecutive failures (time-out, refused connection, closed
/// connection, protocol error). At `ejectAfter` the node is ejected: for `retryAfter` every
/// operation on it answers `.ejected` at once without touching the network, so a dead node
/// costs the fleet only its share of keys (misses) and no waiting. After that one operation
/// is let through as a probe: success brings the node back, failure ejects it again.
final class MemcachedNode: Sendable {
    /// `host:port`.
    let name: String
    private let host: String
    private let port: Int
    private let group: any EventLoopGroup
    private let settings: MemcachedClient.Configuration
    /// Under the project's one lock type (`LockedState`, a pthread mutex): ThreadSanitizer sees
    /// its ordering, which it did not see for `Synchronization.Mutex` (futex-based on Linux).
    private let state: LockedState<State>
    let counters = Counters()

    private struct Slot {
        var generation: UInt64
        var channel: EventLoopFuture<any Channel>
    }

    private struct State {
        var slots: [Slot?]
        /// The connections of the event loops that made requests, by loop.
        var onLoops: [ObjectIdentifier: Slot] = [:]
        var next = 0
        var generation: UInt64 = 0
        var failures = 0
        var ejectedUntil: NIODeadline?
        var probing = false
        var shutDown = false

        /// Empties every slot and every loop's connection, returning them (to be closed).
        mutating func removeAll() -> [Slot] {
            let open = slots.compactMap { $0 } + onLoops.values
            slots = Array(repeating: nil, count: slots.count)
            onLoops = [:]
            return open
        }
    }

    /// The node's figures, from atomics (read by `stats` without waiting).
    final class Counters: Sendable {
        let hits = Atomic<Int>(0)
        let misses = Atomic<Int>(0)
        let errors = Atomic<Int>(0)
        let ejections = Atomic<Int>(0)
        let bytesSent = Atomic<Int>(0)
        let bytesReceived = Atomic<Int>(0)
        let tooLarge = Atomic<Int>(0)
    }

    init(host: String, port: Int, group: any EventLoopGroup, settings: MemcachedClient.Configuration) {
        self.host = host
        self.port = port
        name = "\(host):\(port)"
        self.group = group
        self.settings = settings
        state = LockedState(State(slots: Array(repeating: nil, count: max(1, settings.connectionsPerNode))))
    }

    private enum Admission { case refuse, normal, probe }

    /// Sends `command` and waits for its answer, at most the configured time-out.
    func execute(_ command: MetaCommand) async -> Result<MetaResponse, MemcachedFailure> {
        let now = NIODeadline.now()
        let admission: Admission = state.withLock { s in
            if s.shutDown { return .refuse }
            if let until = s.ejectedUntil {
                if now < until || s.probing { return .refuse }
                s.probing = true
                return .probe
            }
            return .normal
        }
        guard admission != .refuse else { return .failure(.ejected) }

        let (generation, channel, isNew) = connection()
        // Everything on the connection's own loop, in one hop from the caller: the promise (so
        // the answer, read on that loop, settles it there and resumes the caller at once, not
        // through a second loop), the time-out and its cancellation, and the write.
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: MetaResponse.self)
        let timeoutAmount = settings.timeAmount
        let send: @Sendable () -> Void = { [self] in
            let timeout = loop.scheduleTask(in: timeoutAmount) { promise.fail(MemcachedFailure.timeout) }
            promise.futureResult.whenComplete { _ in timeout.cancel() }
            if isNew {
                channel.whenSuccess { [self] channel in
                    channel.closeFuture.whenComplete { [self] _ in forget(generation) }
                }
            }
            channel.whenComplete { [self] result in
                switch result {
                case .failure:
                    forget(generation)
                    promise.fail(MemcachedFailure.connect)
                case .success(let channel):
                    // A time-out leaves the connection open: memcached answers in order, so the
                    // late answer still pops this request's (already failed) promise and the next
                    // answers stay matched. Closing it would fail every request pipelined behind
                    // (measured: one slow answer then ejected a live node). A hung server keeps
                    // timing out and is ejected, which closes its connections.
                    channel.writeAndFlush(MetaOutbound(command: command, promise: promise), promise: nil)
                }
            }
        }
        if loop.inEventLoop { send() } else { loop.execute(send) }
        let result: Result<MetaResponse, MemcachedFailure>
        do {
            result = .success(try await promise.futureResult.get())
        } catch {
            result = .failure(error as? MemcachedFailure ?? .connectionClosed)
        }
        record(result, probe: admission == .probe, command: command)
        return result
    }

    private func record(_ result: Result<MetaResponse, MemcachedFailure>, probe: Bool, command: MetaCommand) {
        switch result {
        case .success(let response):
            counters.bytesSent.add(command.wireSize, ordering: .relaxed)
            counters.bytesReceived.add((response.value?.count ?? 0) + 8, ordering: .relaxed)
            state.withLock { s in
                s.failures = 0
                if probe {
                    s.probing = false
                    s.ejectedUntil = nil
                }
            }
        case .failure:
            counters.errors.add(1, ordering: .relaxed)
            let stale: [Slot] = state.withLock { s in
                s.failures += 1
                if probe {
                    s.probing = false
                    s.ejectedUntil = .now() + settings.retryAmount
                    return []
                }
                guard s.ejectedUntil == nil, s.failures >= settings.ejectAfter else { return [] }
                s.ejectedUntil = .now() + settings.retryAmount
                counters.ejections.add(1, ordering: .relaxed)
                return s.removeAll()
            }
            for slot in stale { slot.channel.whenSuccess { $0.close(promise: nil) } }
        }
    }

    /// A connection for the next request: the calling event loop's own, or, off the loops,
    /// the next of the round-robin slots; made when missing (a connect attempt in progress is
    /// shared).
    /// (Callbacks on the new connection are registered by the caller, outside the lock.)
    private func connection() -> (UInt64, EventLoopFuture<any Channel>, Bool) {
        let caller = MultiThreadedEventLoopGroup.currentEventLoop
        return state.withLock { s in
            var index = 0
            let existing: Slot?
            if let caller {
                existing = s.onLoops[ObjectIdentifier(caller)]
            } else {
                index = s.next % s.slots.count
                s.next = (s.next &+ 1) % s.slots.count
                existing = s.slots[index]
            }
            if let existing { return (existing.generation, existing.channel, false) }
            s.generation &+= 1
            let made = Slot(generation: s.generation, channel: connect(on: caller ?? group))
            if let caller { s.onLoops[ObjectIdentifier(caller)] = made } else { s.slots[index] = made }
            return (made.generation, made.channel, true)
        }
    }

    private func connect(on group: any EventLoopGroup) -> EventLoopFuture<any Channel> {
        let maxValue = settings.maxValueBytes + 1024
        let future = ClientBootstrap(group: group)
            .connectTimeout(settings.timeAmount)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MetaResponseDecoder(maxValueBytes: maxValue)))
                    try channel.pipeline.syncOperations.addHandler(MetaChannelHandler())
                }
            }
            .connect(host: host, port: port)
        return future
    }

    /// Empties the slot holding connection `generation` (it failed or closed).
    private func forget(_ generation: UInt64) {
        state.withLock { s in
            for index in s.slots.indices where s.slots[index]?.generation == generation { s.slots[index] = nil }
            s.onLoops = s.onLoops.filter { $0.value.generation != generation }
        }
    }

    /// Whether the node is ejected: from its ejection until a probe succeeds (after
    /// `retryAfter`, the next operation is that probe).
    var isEjected: Bool {
        state.withLock { $0.ejectedUntil != nil }
    }

    /// Closes every connection; later operations answer `.ejected`.
    func shutdown() async {
        let open: [Slot] = state.withLock { s in
            s.shutDown = true
            return s.removeAll()
        }
        for slot in open {
            if let channel = try? await slot.channel.get() { try? await channel.close() }
        }
    }
}
