import NIOConcurrencyHelpers
import Foundation

/// Matches the daemon's answers to the calls waiting for them, and fans notifications out to
/// subscribers. Shared by the connection (callers' tasks) and the channel handler (the event
/// loop), so its state sits behind a `Mutex`.
///
/// The registration of a call and its cancellation both run on the channel's event loop
/// (see `ImageCacheConnection.send`), so a `cancel` line can never overtake its request.
final class ResponseRouter: Sendable {
    typealias Reply = CheckedContinuation<Data, any Error>

    private struct State {
        var nextID = 1
        /// Calls waiting for their answer, by id.
        var pending: [Int: Reply] = [:]
        /// Ids cancelled before their request was registered: the registration then gives up.
        var cancelledEarly: Set<Int> = []
        /// Ids whose answer nobody waits for any more (cancelled calls, `cancel` requests of
        /// the client's own): the answer is dropped when it comes.
        var abandoned: Set<Int> = []
        var subscribers: [Int: AsyncStream<ServerNotification>.Continuation] = [:]
        var nextSubscriber = 0
        /// Set once the connection is closed; every later call fails with it at once.
        var closedError: ImageCacheClientError?
    }

    private let state = NIOLockedValueBox(State())

    /// A fresh request id; ids increase from 1 and are never reused on a connection.
    func makeID() -> Int {
        state.withLockedValue { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// The outcome of registering a call.
    enum Registration {
        case registered
        case cancelled
        case closed(ImageCacheClientError)
    }

    /// Records that `reply` waits for the answer to `id`, unless the call was already
    /// cancelled or the connection closed (then the caller resumes `reply` itself).
    func register(_ id: Int, _ reply: Reply) -> Registration {
        state.withLockedValue { state in
            if state.cancelledEarly.remove(id) != nil { return .cancelled }
            if let error = state.closedError { return .closed(error) }
            state.pending[id] = reply
            return .registered
        }
    }

    /// The caller of `id` gave up. Returns its waiting continuation (to resume with
    /// `CancellationError`) when the request was sent, so a `cancel` is owed to the daemon;
    /// nil when it was not sent yet (the registration will then give up) or already answered.
    func abandon(_ id: Int) -> Reply? {
        state.withLockedValue { state in
            if let reply = state.pending.removeValue(forKey: id) {
                state.abandoned.insert(id)
                return reply
            }
            if state.closedError == nil { state.cancelledEarly.insert(id) }
            return nil
        }
    }

    /// Marks `id` as one whose answer is to be dropped (the client's own `cancel` requests).
    func ignoreAnswer(to id: Int) {
        state.withLockedValue { state in _ = state.abandoned.insert(id) }
    }

    /// Hands an answer to its waiting call; answers to abandoned or unknown ids are dropped.
    func deliver(id: Int, line: Data) {
        let reply = state.withLockedValue { state -> Reply? in
            if state.abandoned.remove(id) != nil { return nil }
            return state.pending.removeValue(forKey: id)
        }
        reply?.resume(returning: line)
    }

    /// Fails one call (its request could not be written).
    func fail(id: Int, with error: any Error) {
        let reply = state.withLockedValue { $0.pending.removeValue(forKey: id) }
        reply?.resume(throwing: error)
    }

    /// Sends a notification to every current subscriber.
    func publish(_ notification: ServerNotification) {
        let subscribers = state.withLockedValue { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(notification) }
    }

    /// A new stream of notifications from now on; finished at once when already closed.
    func subscribe() -> AsyncStream<ServerNotification> {
        let (stream, continuation) = AsyncStream<ServerNotification>.makeStream()
        let key = state.withLockedValue { state -> Int? in
            guard state.closedError == nil else { return nil }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLockedValue { _ = $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// The connection is gone: every pending call fails with `error`, every notification
    /// stream finishes, and later calls fail at once. Only the first reason is kept.
    func close(with error: ImageCacheClientError) {
        let (replies, subscribers) = state.withLockedValue { state -> ([Reply], [AsyncStream<ServerNotification>.Continuation]) in
            if state.closedError == nil { state.closedError = error }
            let replies = Array(state.pending.values)
            let subscribers = Array(state.subscribers.values)
            state.pending.removeAll()
            state.subscribers.removeAll()
            state.cancelledEarly.removeAll()
            state.abandoned.removeAll()
            return (replies, subscribers)
        }
        let reason = state.withLockedValue { $0.closedError } ?? error
        for reply in replies { reply.resume(throwing: reason) }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Why the connection closed, or nil while it is open.
    var closedError: ImageCacheClientError? {
        state.withLockedValue { $0.closedError }
    }
}
