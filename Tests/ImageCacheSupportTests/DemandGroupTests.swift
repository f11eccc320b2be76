import ImageCacheSupport
import Testing

@Suite("Support: a demand group (max priority, last one out cancels)", .timeLimit(.minutes(1)))
struct DemandGroupTests {
    /// What the group did to its work, in order.
    private final class Recorder: Sendable {
        enum Action: Equatable { case priority(Int), cancel }
        let actions = LockedState<[Action]>([])
        var work: DemandGroup<Int, Int, String>.Work {
            .init(setPriority: { p in self.actions.withLock { $0.append(.priority(p)) } },
                  cancel: { self.actions.withLock { $0.append(.cancel) } })
        }
        var recorded: [Action] { actions.withLock { $0 } }
    }

    /// A group at priority 1 with its work attached, and what the group did to that work.
    private static func attached() -> (DemandGroup<Int, Int, String>, Recorder) {
        let group = DemandGroup<Int, Int, String>(priority: 1)
        let recorder = Recorder()
        group.attach(recorder.work, startedAt: 1)
        return (group, recorder)
    }

    @Test("the work runs at the highest member's priority: raised by a join, lowered by a withdrawal")
    func maxPriority() {
        let (group, recorder) = Self.attached()
        #expect(group.join(1, priority: 1, member: "prefetch"))
        #expect(group.join(2, priority: 5, member: "visible"))
        #expect(group.priority == 5)
        #expect(group.join(3, priority: 3, member: "other"))
        #expect(group.priority == 5, "a lower join leaves the priority alone")
        #expect(!group.withdraw(2))
        #expect(group.priority == 3)
        #expect(recorder.recorded == [.priority(5), .priority(3)])
        #expect(Set(group.members) == ["prefetch", "other"])
        #expect(group.count == 2)
    }

    @Test("the last one out cancels the work, once; the group then takes nobody")
    func lastOutCancels() {
        let (group, recorder) = Self.attached()
        group.join(1, priority: 1, member: "a")
        group.join(2, priority: 1, member: "b")
        #expect(!group.withdraw(1))
        #expect(!group.withdraw(1), "withdrawing twice is a no-op")
        #expect(group.withdraw(2))
        #expect(group.isAbandoned)
        #expect(!group.withdraw(2))
        #expect(recorder.recorded == [.cancel])
        #expect(!group.join(3, priority: 1, member: "late"), "an abandoned group is replaced, not rejoined")
    }

    @Test("work attached after everyone left is cancelled at once")
    func attachAfterAbandon() {
        let group = DemandGroup<Int, Int, String>(priority: 1)
        group.join(1, priority: 1, member: "a")
        #expect(group.withdraw(1))
        let recorder = Recorder()
        group.attach(recorder.work, startedAt: 1)
        #expect(recorder.recorded == [.cancel])
    }

    @Test("a join between reading the priority and attaching the work still moves the work")
    func joinBeforeAttachRaises() {
        let group = DemandGroup<Int, Int, String>(priority: 1)
        group.join(1, priority: 1, member: "prefetch")
        let startedAt = group.priority  // the owner starts the work at this priority…
        group.join(2, priority: 5, member: "visible")  // …a visible demand joins before it attaches
        let recorder = Recorder()
        group.attach(recorder.work, startedAt: startedAt)
        #expect(recorder.recorded == [.priority(5)])
        let unchanged = DemandGroup<Int, Int, String>(priority: 1)
        let quiet = Recorder()
        unchanged.attach(quiet.work, startedAt: 1)
        #expect(quiet.recorded.isEmpty)
    }

    @Test("once the work has ended, the last one out cancels nothing")
    func endedWorkIsNotCancelled() {
        let (group, recorder) = Self.attached()
        group.join(1, priority: 1, member: "a")
        group.end()
        #expect(!group.withdraw(1))
        #expect(!group.isAbandoned)
        #expect(recorder.recorded.isEmpty)
        #expect(group.join(2, priority: 1, member: "late"), "a late member still gets the ended work's outcome")
    }

    @Test("many members joining and leaving from many tasks: exactly one cancel, by the last out")
    func concurrentWithdrawals() async {
        let group = DemandGroup<Int, Int, String>(priority: 0)
        let recorder = Recorder()
        group.attach(recorder.work, startedAt: 0)
        for id in 0..<200 { group.join(id, priority: id % 7, member: "\(id)") }
        let lastOut = await withTaskGroup(of: Bool.self) { tasks in
            for id in 0..<200 { tasks.addTask { group.withdraw(id) } }
            return await tasks.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(lastOut == 1)
        #expect(recorder.recorded.filter { $0 == .cancel }.count == 1)
        #expect(group.count == 0 && group.isAbandoned)
    }
}
