import ImageCacheSupport
import Testing
import TestSupport

@Suite("Support: a table of owned tasks", .timeLimit(.minutes(1)))
struct TaskTableTests {
    private typealias Table = TaskTable<String, Int, Void, Never>

    /// A task that runs until it is cancelled, and says so.
    private static func parked() -> Task<Void, Never> {
        Task {
            let forever = SharedOutcome<Void, Never>()
            _ = try? await forever.value()
        }
    }

    @Test("a task attached to a live entry is owned; one attached to an entry gone is refused")
    func attachAndOrphans() {
        var table = Table()
        let first = table.reserve("a", 1)!
        let task = Self.parked()
        let owned = table.attach(task, to: "a", serial: first)
        #expect(owned)
        let second = table.reserve("a", 2)!
        #expect(second != first)
        let late = Self.parked()
        let stale = table.attach(late, to: "a", serial: first)
        #expect(!stale, "the entry was replaced: its serial is stale")
        let unknown = table.attach(late, to: "b", serial: first)
        #expect(!unknown)
        late.cancel()
        task.cancel()
        #expect(table["a"]?.entry == 2)
    }

    @Test("cancel one: remove takes out only the entry named, by serial when given")
    func removeOne() async {
        var table = Table()
        let a = table.reserve("a", 1)!
        let b = table.reserve("b", 2)!
        let taskA = Self.parked()
        _ = table.attach(taskA, to: "a", serial: a)
        let staleRemoval = table.remove("b", serial: b + 1)
        #expect(staleRemoval == nil, "a stale serial removes nothing")
        let removed = table.remove("a", serial: a)
        #expect(removed?.entry == 1)
        removed?.task?.cancel()
        await taskA.value
        #expect(taskA.isCancelled)
        #expect(table.count == 1 && table["b"]?.serial == b)
        let updated: Void? = table.update("b") { $0 = 20 }
        let staleUpdate: Void? = table.update("b", serial: a) { $0 = 30 }
        #expect(updated != nil && staleUpdate == nil)
        #expect(table["b"]?.entry == 20)
        let matching = table.removeAll { $0 == "b" }.map(\.key)
        #expect(matching == ["b"])
        #expect(table.isEmpty)
    }

    @Test("close hands back every task to cancel and refuses new entries")
    func closeAll() async {
        var table = Table()
        let tasks = (0..<3).map { index -> Task<Void, Never> in
            let serial = table.reserve("\(index)", index)!
            let task = Self.parked()
            _ = table.attach(task, to: "\(index)", serial: serial)
            return task
        }
        let owned = table.close()
        #expect(owned.count == 3 && table.isEmpty && table.isClosed)
        owned.cancelAll()
        for task in tasks { await task.value }
        let refused = table.reserve("x", 9)
        #expect(refused == nil)
    }

    @Test("drained settles when the last entry leaves, at once when empty, and afresh after new work")
    func drain() async throws {
        let table = LockedState(Table())
        #expect(table.withLock { $0.drained() }.isSettled, "an empty table is drained at once")
        let serial = table.withLock { $0.reserve("a", 1)! }
        _ = table.withLock { $0.reserve("b", 2)! }
        let drained = table.withLock { $0.drained() }
        let waiting = Task { try await drained.value() }
        _ = table.withLock { $0.remove("a", serial: serial) }
        #expect(!drained.isSettled)
        _ = table.withLock { $0.remove("b") }
        try await withTimeout(seconds: 10) { try await waiting.value }
        _ = table.withLock { $0.reserve("c", 3)! }
        let again = table.withLock { $0.drained() }
        #expect(!again.isSettled, "a new wait is not satisfied by an earlier emptying")
        _ = table.withLock { $0.close() }
        #expect(again.isSettled, "closing empties the table")
    }
}
