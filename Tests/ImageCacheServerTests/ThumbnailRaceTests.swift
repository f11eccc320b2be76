import Foundation
import ImageCacheKit
import Testing
import TestSupport

/// The contract's *no late results* rule, hammered: thousands of `thumbnail.show` and
/// `thumbnail.recycle` interleavings on a few slots, pipelined on one connection against real
/// fetches (every round at a new size, so most shows go to the network and complete at
/// arbitrary moments), and every message on the wire checked against the slot's history.
@Suite("No late results: show/recycle interleavings on the wire", .timeLimit(.minutes(10)))
struct ThumbnailRaceTests {
    /// One operation the client sent, in the order it sent them.
    enum Op {
        case show(id: Int, slot: Int, photo: String)
        case recycle(id: Int, slot: Int)

        var id: Int {
            switch self {
            case .show(let id, _, _), .recycle(let id, _): return id
            }
        }

        var slot: Int {
            switch self {
            case .show(_, let slot, _), .recycle(_, let slot): return slot
            }
        }
    }

    /// Checks the wire against the slots' histories. Per slot, ops are numbered in sending
    /// order (the daemon applies a connection's show/recycle in arrival order); a message
    /// belongs to one op, and once a message of a later op has been seen, nothing of an
    /// earlier op may follow. Notifications name (slot, photo) and must belong to a show not
    /// yet answered and not superseded.
    struct Checker {
        /// Per slot: the ops in order.
        var history: [Int: [Op]] = [:]
        /// Per slot: the index of the latest op a message was seen for.
        var cursor: [Int: Int] = [:]
        /// Request id → (slot, index).
        var position: [Int: (slot: Int, index: Int)] = [:]
        /// Request id → its answer.
        var answers: [Int: [String: Any]] = [:]
        var violations: [String] = []

        mutating func sent(_ op: Op) {
            position[op.id] = (op.slot, history[op.slot, default: []].count)
            history[op.slot, default: []].append(op)
        }

        mutating func read(_ message: [String: Any]) {
            if let method = message.notificationMethod {
                guard method == "thumbnail.progress" || method == "thumbnail.dimensions" else { return }
                let params = message.params
                guard let slot = params["slot"] as? Int, let photo = params["photo"] as? String else {
                    violations.append("notification without slot/photo: \(message)")
                    return
                }
                let ops = history[slot] ?? []
                let from = cursor[slot] ?? 0
                let owner = ops.indices.first { index in
                    guard index >= from, case .show(let id, _, let shown) = ops[index] else { return false }
                    return shown == photo && answers[id] == nil
                }
                guard let owner else {
                    violations.append("late \(method) for slot \(slot) photo \(photo) (cursor \(from))")
                    return
                }
                cursor[slot] = owner
                return
            }
            guard let id = message["id"] as? Int, let (slot, index) = position[id] else {
                violations.append("answer for an unknown id: \(message)")
                return
            }
            if answers[id] != nil { violations.append("second answer for \(id)") }
            answers[id] = message
            if index < cursor[slot] ?? 0 {
                violations.append("answer for \(id) (slot \(slot) op \(index)) after a message of op \(cursor[slot] ?? 0): \(message)")
            }
            cursor[slot] = max(cursor[slot] ?? 0, index)
            if case .show(_, _, let photo) = history[slot]![index], let result = message.resultObject {
                if result["photo"] as? String != photo || result["slot"] as? Int != slot {
                    violations.append("result for \(id) names \(result["photo"] ?? "nil")#\(result["slot"] ?? "nil"), asked \(photo)#\(slot)")
                }
            }
        }

        /// The checks that need every answer: each show answered once, 1007 only when a later
        /// op recycled it, and each recycle's `cancelled` telling whether it did.
        mutating func finish() {
            for (slot, ops) in history {
                for (index, op) in ops.enumerated() {
                    guard let answer = answers[op.id] else {
                        violations.append("no answer for \(op.id)")
                        continue
                    }
                    switch op {
                    case .show:
                        if answer.errorCode != nil {
                            if answer.errorReason != "recycled" {
                                violations.append("show \(op.id) failed: \(answer)")
                            } else if index + 1 >= ops.count {
                                violations.append("show \(op.id) recycled by nothing")
                            }
                        }
                    case .recycle:
                        let cancelled = answer.resultObject?["cancelled"] as? Bool
                        var expected = false
                        if index > 0, case .show(let previous, _, _) = ops[index - 1] {
                            expected = answers[previous]?.errorReason == "recycled"
                        }
                        if cancelled != expected {
                            violations.append("recycle \(op.id) on slot \(slot) said cancelled=\(cancelled.map(String.init) ?? "nil"), expected \(expected)")
                        }
                    }
                }
            }
        }
    }

    @Test("the checker catches a late result, a late notification and a lying recycle")
    func checkerCatchesLateMessages() {
        var checker = Checker()
        checker.sent(.show(id: 1, slot: 0, photo: "p:a"))
        checker.sent(.recycle(id: 2, slot: 0))
        checker.sent(.show(id: 3, slot: 0, photo: "p:b"))
        checker.read(["id": 2, "result": ["cancelled": false] as [String: Any]])
        checker.read(["method": "thumbnail.dimensions", "params": ["slot": 0, "photo": "p:a", "width": 1, "height": 1] as [String: Any]])
        checker.read(["id": 1, "result": ["slot": 0, "photo": "p:a", "path": "/x"] as [String: Any]])
        checker.read(["id": 3, "result": ["slot": 0, "photo": "p:b", "path": "/y"] as [String: Any]])
        checker.finish()
        #expect(checker.violations.contains { $0.hasPrefix("late thumbnail.dimensions") })
        #expect(checker.violations.contains { $0.hasPrefix("answer for 1") })
        #expect(checker.violations.count == 2)

        var honest = Checker()
        honest.sent(.show(id: 1, slot: 0, photo: "p:a"))
        honest.sent(.recycle(id: 2, slot: 0))
        honest.read(["id": 1, "error": ["code": 1007, "data": ["kind": "cancelled", "reason": "recycled"]] as [String: Any]])
        honest.read(["id": 2, "result": ["cancelled": false] as [String: Any]])
        honest.finish()
        #expect(honest.violations.count == 1)
        #expect(honest.violations.first?.hasPrefix("recycle 2") == true)
    }

    @Test("thousands of interleavings: nothing late, each show answered once, recycles tell the truth")
    func hammer() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .milliseconds(30) }) { f in
            let client = try await f.connect()
            let photos = try await f.photoIDs(client: client, id: 1, count: 30)
            try #require(photos.count >= 10)
            var generator = SystemRandomNumberGenerator()
            var checker = Checker()
            var nextID = 10
            let slots = 6
            let rounds = 60
            var operations = 0
            for round in 0..<rounds {
                let size = 24 + round % 24
                var lastPhoto: [Int: String] = [:]
                var batch: [String] = []
                var order: [Int] = []
                var ids: Set<Int> = []
                var showIDs: Set<Int> = []
                func add(_ op: Op, _ line: String) {
                    checker.sent(op)
                    batch.append(line)
                    order.append(op.id)
                    ids.insert(op.id)
                    if case .show = op { showIDs.insert(op.id) }
                }
                for _ in 0..<30 {
                    let slot = Int.random(in: 0..<slots, using: &generator)
                    nextID += 1
                    if Int.random(in: 0..<4, using: &generator) == 0 {
                        add(.recycle(id: nextID, slot: slot), rpcLine(nextID, "thumbnail.recycle", ["slot": slot]))
                    } else {
                        var photo = photos.randomElement(using: &generator)!
                        while photo == lastPhoto[slot] { photo = photos.randomElement(using: &generator)! }
                        lastPhoto[slot] = photo
                        add(.show(id: nextID, slot: slot, photo: photo),
                            rpcLine(nextID, "thumbnail.show", ["slot": slot, "photo": photo, "size": size]))
                    }
                }
                // Every round ends with every slot recycled, so every show gets its answer.
                for slot in 0..<slots {
                    nextID += 1
                    add(.recycle(id: nextID, slot: slot), rpcLine(nextID, "thumbnail.recycle", ["slot": slot]))
                }
                operations += batch.count
                // Sent a few ops at a time, each write after the next message arrived, so ops keep
                // arriving while earlier fetches complete (the race this hunts for). The final
                // recycles race with the round's last fetches.
                var pending = ids
                // Only what is on the wire and not yet answered can still bring a message.
                var sent: Set<Int> = []
                for chunk in stride(from: 0, to: batch.count, by: 4) {
                    let range = chunk..<min(chunk + 4, batch.count)
                    let lines = batch[range].map { $0 + "\n" }.joined()
                    try await client.send(bytes: Array(lines.utf8))
                    sent.formUnion(order[range])
                    guard chunk + 4 < batch.count - slots else { continue }
                    // Half the time wait for a show to be answered (fetches complete between
                    // writes), else for any message (ops arrive while fetches run). Only a show
                    // already sent can be waited for: the rest of the round is not on the wire yet.
                    let waitForShow = Bool.random(using: &generator) && !pending.intersection(sent).isDisjoint(with: showIDs)
                    while true {
                        let message = try await read(client, awaiting: pending.intersection(sent), checker: checker)
                        checker.read(message)
                        guard let id = message["id"] as? Int else { if !waitForShow { break } else { continue } }
                        pending.remove(id)
                        if !waitForShow || showIDs.contains(id) { break }
                    }
                }
                while !pending.isEmpty {
                    let message = try await read(client, awaiting: pending, checker: checker)
                    checker.read(message)
                    if let id = message["id"] as? Int { pending.remove(id) }
                }
                if checker.violations.count > 20 { break }
            }
            checker.finish()
            #expect(operations >= 2000)
            #expect(checker.violations.isEmpty, "\(checker.violations.prefix(20).joined(separator: "\n"))")
            // The run exercised both outcomes: some shows delivered, some recycled.
            let shows = checker.answers.values.filter { $0.resultObject?["path"] != nil }.count
            let recycled = checker.answers.values.filter { $0.errorReason == "recycled" }.count
            let fetched = checker.answers.values.filter { $0.resultObject?["source"] as? String == "network" }.count
            #expect(shows > 0)
            #expect(fetched > 0)
            #expect(recycled > 0)
            print("race hammer: \(operations) ops, \(shows) delivered (\(fetched) from the network), \(recycled) recycled")
            await client.close()
        }
    }

    /// The next message; on time-out, says which sent requests were still unanswered and
    /// what their slots saw, so a lost answer can be traced.
    private func read(_ client: RawClient, awaiting pending: Set<Int>, checker: Checker) async throws -> [String: Any] {
        do {
            return try await client.readMessage(timeout: 120)
        } catch let error as TimeoutError {
            let lost = pending.sorted().map { id -> String in
                guard let (slot, index) = checker.position[id] else { return "\(id): ?" }
                let ops = checker.history[slot] ?? []
                let around = ops[max(0, index - 2)..<min(ops.count, index + 3)].map { op -> String in
                    let answered = checker.answers[op.id].map { $0.errorReason ?? ($0.resultObject?["source"] as? String ?? "result") } ?? "unanswered"
                    return "\(op)=\(answered)"
                }
                return "\(id) (slot \(slot) op \(index), cursor \(checker.cursor[slot] ?? 0)): \(around.joined(separator: ", "))"
            }
            Issue.record("no message within \(error.seconds) s; unanswered: \(lost.joined(separator: "\n"))")
            throw error
        }
    }
}
