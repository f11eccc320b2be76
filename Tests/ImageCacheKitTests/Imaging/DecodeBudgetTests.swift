import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: decode budget", .timeLimit(.minutes(1)))
struct DecodeBudgetTests {
    private static let mib = 1 << 20
    /// An ordinary decode's cost under a 64 MiB budget (reserve 8 MiB).
    private static let small = DecodeCost(bytes: 4 << 20, work: 1000)

    @Test("no more than `slots` bodies run at once, and the bytes held never pass the budget")
    func boundsConcurrencyAndBytes() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 3)
        let running = Shared((now: 0, peak: 0, bytes: 0, peakBytes: 0))
        let costs = (0..<24).map { DecodeCost(bytes: ($0 % 4 + 1) * 5 << 20, work: 10) }
        try await withTimeout(seconds: 30) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for cost in costs {
                    group.addTask {
                        try await budget.withPermit(cost) {
                            running.value.withLock {
                                $0.now += 1; $0.peak = max($0.peak, $0.now)
                                $0.bytes += cost.bytes; $0.peakBytes = max($0.peakBytes, $0.bytes)
                            }
                            await Task.yield()
                            running.value.withLock { $0.now -= 1; $0.bytes -= cost.bytes }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let seen = running.value.withLock { $0 }
        #expect(seen.peak <= 3)
        #expect(seen.peakBytes <= 64 << 20)
        #expect(budget.available == 3)
        #expect(budget.heldBytes == 0)
    }

    @Test("a decode that could never fit is too_large at once, saying why, and holds nothing")
    func neverFits() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 2)
        let error = await rpcError { try await budget.acquire(DecodeCost(bytes: 60 << 20, work: 1)) }
        #expect(error?.kind == .tooLarge)
        #expect(error?.message.contains("decode_memory") == true, "\(String(describing: error))")
        #expect(budget.heldBytes == 0 && budget.waiting == 0 && budget.available == 2)
        // What fits the heavy lane (64 − 8 MiB) is admitted.
        try await budget.withPermit(DecodeCost(bytes: 56 << 20, work: 1)) { #expect(budget.heavyRunning == 1) }
    }

    @Test("waiters get what a finished decode frees, first come first served")
    func handsOverInOrder() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 2)
        let first1 = try await budget.acquire(Self.small)
        let second1 = try await budget.acquire(Self.small)
        let order = Shared<[Int]>([])
        let first = Task { try await budget.withPermit(Self.small) { order.value.withLock { $0.append(1) } } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        let second = Task { try await budget.withPermit(Self.small) { order.value.withLock { $0.append(2) } } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 2) }
        budget.release(first1)
        try await first.value
        try await second.value
        #expect(order.value.withLock { $0 } == [1, 2])
        budget.release(second1)
        #expect(budget.available == 2 && budget.heldBytes == 0)
    }

    @Test("a decode waits while the bytes it needs are held, though a slot is free")
    func waitsForBytes() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 4)
        let big = DecodeCost(bytes: 40 << 20, work: 1)
        let held = try await budget.acquire(big)
        let second = Task { try await budget.withPermit(big) { budget.heldBytes } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        #expect(budget.available == 3)
        budget.release(held)
        #expect(try await withTimeout(seconds: 10) { try await second.value } == 40 << 20)
    }

    @Test("a cancelled waiter leaves the queue with CancellationError and takes nothing")
    func cancelledWaiterLeaves() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 2)
        let a = try await budget.acquire(Self.small)
        let b = try await budget.acquire(Self.small)
        let waiter = Task { try await budget.withPermit(Self.small) { 42 } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(budget.waiting == 0)
        budget.release(a)
        budget.release(b)
        #expect(budget.available == 2 && budget.heldBytes == 0)
    }

    @Test("heavy decodes never take every slot: an ordinary one passes the heavy queue")
    func ordinaryPassesHeavy() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 2)
        let heavy = DecodeCost(bytes: 1 << 20, work: DecodeCost.ordinaryWork + 1)
        #expect(budget.isHeavy(heavy) && !budget.isHeavy(Self.small))
        let held = try await budget.acquire(heavy)
        let secondHeavy = Task { try await budget.withPermit(heavy) { budget.heavyRunning } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        // One slot is free but belongs to ordinary decodes: the second heavy one still waits,
        // and an ordinary one arriving after it starts at once.
        #expect(budget.heavyRunning == 1 && budget.available == 1)
        let ran = try await withTimeout(seconds: 10) {
            try await budget.withPermit(Self.small) { budget.heavyRunning }
        }
        #expect(ran == 1)
        #expect(budget.waiting == 1)
        budget.release(held)
        #expect(try await withTimeout(seconds: 10) { try await secondHeavy.value } == 1)
    }

    @Test("heavy decodes leave `reserve` bytes to ordinary ones")
    func heavyLeavesReserve() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 4)
        let heavy = DecodeCost(bytes: 28 << 20, work: 1)
        let a = try await budget.acquire(heavy)
        let b = try await budget.acquire(heavy)
        // 56 MiB held by heavy decodes: 8 MiB are left, all of them for ordinary decodes.
        let third = Task { try await budget.withPermit(DecodeCost(bytes: 9 << 20, work: 1)) { 3 } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        let ordinary = try await withTimeout(seconds: 10) {
            try await budget.withPermit(DecodeCost(bytes: 7 << 20, work: 1)) { budget.heldBytes }
        }
        #expect(ordinary == 63 << 20)
        budget.release(a)
        #expect(try await withTimeout(seconds: 10) { try await third.value } == 3)
        budget.release(b)
        #expect(budget.heldBytes == 0)
    }

    @Test("a reloaded decode_memory admits waiters that now fit and refuses those that never will")
    func applyReload() async throws {
        let budget = DecodeBudget(memory: 64 << 20, slots: 4)
        let holder = DecodeCost(bytes: 50 << 20, work: 1)
        let held = try await budget.acquire(holder)
        let fits = Task { try await budget.withPermit(DecodeCost(bytes: 20 << 20, work: 1)) { 1 } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        // Grown: 20 MiB now fits beside the 50 held.
        budget.apply(memory: 128 << 20)
        #expect(try await withTimeout(seconds: 10) { try await fits.value } == 1)
        // 70 MiB waits beside the 50 held (112 MiB for heavy decodes); shrunk, it never fits 7/8 of 32.
        let shrunk = Task { try await budget.withPermit(DecodeCost(bytes: 70 << 20, work: 1)) { 2 } }
        try await withTimeout(seconds: 10) { try await budget.waitForWaiting(atLeast: 1) }
        budget.apply(memory: 32 << 20)
        let error = await rpcError { _ = try await shrunk.value }
        #expect(error?.kind == .tooLarge, "\(String(describing: error))")
        budget.release(held)
        #expect(budget.heldBytes == 0 && budget.waiting == 0)
    }

    @Test("an actor decodes real images under the budget, its own state touched inside the permit")
    func actorDecodesUnderBudget() async throws {
        let decoder = BudgetedDecoder()
        let bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        let widths = try await withTimeout(seconds: 60) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await decoder.decode(bytes).width } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(widths == [227, 227, 227, 227])
        #expect(await decoder.decoded == 4)
        #expect(decoder.budget.available == 2 && decoder.budget.heldBytes == 0)
    }
}

/// A Mutex that tasks can share (Mutex itself cannot be captured by an escaping closure).
final class Shared<Value: Sendable>: Sendable {
    let value: LockedState<Value>
    init(_ initial: Value) { value = LockedState(initial) }
}

/// The shape the pipeline uses: an actor decoding under the budget, touching its own state.
private actor BudgetedDecoder {
    let budget = DecodeBudget(memory: 64 << 20, slots: 2)
    var decoded = 0

    func decode(_ bytes: [UInt8]) async throws -> ImageHeader {
        let cost = try Thumbnailer.validationCost(of: bytes)
        return try await budget.withPermit(cost) {
            decoded += 1
            return try Thumbnailer.validate(bytes)
        }
    }
}
