import Synchronization

/// The live sessions, for `stats` and for a graceful shutdown that must reach every one.
final class SessionRegistry: Sendable {
    private struct State {
        var sessions: [UInt64: Session] = [:]
        var waiters: [(limit: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = LockedState(State())
    private let nextID = Atomic<UInt64>(0)

    /// A fresh session id; ids are never reused within one run, so logs stay unambiguous.
    func makeID() -> UInt64 {
        nextID.add(1, ordering: .relaxed).newValue
    }

    func add(_ session: Session) {
        state.withLock { $0.sessions[session.id] = session }
    }

    func remove(_ session: Session) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.sessions[session.id] = nil
            let count = state.sessions.count
            let ready = state.waiters.filter { count <= $0.limit }.map(\.continuation)
            state.waiters.removeAll { count <= $0.limit }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    var count: Int { state.withLock { $0.sessions.count } }

    var all: [Session] { state.withLock { Array($0.sessions.values) } }

    /// Returns once at most `limit` sessions are connected.
    func waitUntilCount(atMost limit: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.sessions.count <= limit { return true }
                state.waiters.append((limit, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}
