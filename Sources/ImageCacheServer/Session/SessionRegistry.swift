import ImageCacheKit
import Synchronization

/// The live sessions, for `stats` and for a graceful shutdown that must reach every one.
///
/// The table is an `Observed` value, so a caller can await a condition on it (`waitUntilCount`)
/// and be woken by the change itself: each add and remove changes the table and wakes the
/// waiters under the same lock, so no waiter can miss a change or see them out of order.
final class SessionRegistry: Sendable {
    private let sessions = Observed<[UInt64: Session]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A fresh session id; ids are never reused within one run, so logs stay unambiguous.
    func makeID() -> UInt64 {
        nextID.add(1, ordering: .relaxed).newValue
    }

    func add(_ session: Session) {
        sessions.update { $0[session.id] = session }
    }

    func remove(_ session: Session) {
        sessions.update { $0[session.id] = nil }
    }

    var count: Int { sessions.value.count }

    var all: [Session] { Array(sessions.value.values) }

    /// Returns once at most `limit` sessions are connected, or when the waiting task is
    /// cancelled (its caller stops waiting; nothing else changes).
    func waitUntilCount(atMost limit: Int) async {
        try? await sessions.wait { $0.count <= limit }
    }
}
