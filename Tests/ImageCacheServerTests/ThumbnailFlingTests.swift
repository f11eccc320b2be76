import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Flings through the socket (docs/protocol.md, "thumbnail.show"): after 3 recycles of loading slots within 250 ms a
/// new network request waits up to `fling_dwell`; the test sets the dwell to a minute, so
/// anything answered well within the test's bounds was not held for the dwell. Holding is
/// observed through the daemon's own log events, never by sleeping.
@Suite("Flings hold network requests; calm sessions and hits never wait", .timeLimit(.minutes(5)))
struct ThumbnailFlingTests {
    static let held = "request held while its session flings"

    /// Shows three slots whose images the server holds, then recycles all three and shows
    /// `next` on slot `base + 3` in one write (so the recycles fall well within 250 ms); with
    /// `withdraw`, the recycle of that slot follows in the same write. Request ids are
    /// `base * 100 + …`; the show of `next` is `base * 100 + 20`, its recycle `+ 21`. Returns
    /// the answers read (those of the show and its recycle too when `withdraw`).
    @discardableResult
    private func fling(_ f: ThumbnailFixture, _ client: RawClient, then next: String, base: Int = 0,
                       withdraw: Bool = false) async throws -> [Int: [String: Any]] {
        for slot in base..<base + 3 {
            let url = f.serve("/fling-\(slot).jpg", seed: UInt64(slot + 10), faults: [.held])
            try await client.send(rpcLine(base * 100 + slot - base + 1, "thumbnail.show", ["slot": slot, "url": url]))
        }
        try await f.waitForServer { c in (base..<base + 3).allSatisfy { c.requests("/fling-\($0).jpg") == 1 } }
        let lines = (0..<3).map { rpcLine(base * 100 + 10 + $0, "thumbnail.recycle", ["slot": base + $0]) }
            + [rpcLine(base * 100 + 20, "thumbnail.show", ["slot": base + 3, "url": next])]
            + (withdraw ? [rpcLine(base * 100 + 21, "thumbnail.recycle", ["slot": base + 3])] : [])
        try await client.send(bytes: Array(lines.map { $0 + "\n" }.joined().utf8))
        let ids = Set((1...3).map { base * 100 + $0 } + (10...12).map { base * 100 + $0 })
            .union(withdraw ? [base * 100 + 20, base * 100 + 21] : [])
        let recycled = try await client.answers(for: ids)
        for id in 1...3 { #expect(recycled[base * 100 + id]?.errorReason == "recycled") }
        for id in 10...12 { #expect(recycled[base * 100 + id]?.resultObject?["cancelled"] as? Bool == true) }
        return recycled
    }

    private func releaseAll(_ f: ThumbnailFixture, base: Int = 0) {
        for slot in base..<base + 3 { f.images.release("/fling-\(slot).jpg") }
    }

    @Test("a slot recycled while held during a fling never reaches the network")
    func heldRecycledNeverFetches() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .seconds(60) }) { f in
            let client = try await f.connect()
            let path = "/never.jpg"
            let target = f.serve(path, seed: 42)
            // The show and its recycle come in the fling's own write: the daemon reads them in
            // that order, so the show arrives during the fling (it is held, whatever its task does
            // next) and its recycle reaches the held task before the fling (250 ms) can end. The
            // hold then logs exactly one outcome: withdrawn, or started had the recycle come late.
            let answers = try await fling(f, client, then: target, withdraw: true)
            #expect(answers[20]?.errorReason == "recycled")
            #expect(answers[21]?.resultObject?["cancelled"] as? Bool == true)
            try await f.logs.wait(for: Self.held, slot: "main#3", timeout: 30)
            let outcome = try await f.logs.wait(for: "held request withdrawn", "held request starts", slot: "main#3", timeout: 30)
            #expect(outcome == "held request withdrawn")
            #expect(f.images.counters.requests(path) == 0)
            releaseAll(f)
            await client.close()
        }
    }

    @Test("a held request starts when the fling ends, not when its dwell ends")
    func heldStartsAtFlingEnd() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .seconds(60) }) { f in
            let client = try await f.connect()
            let target = f.serve("/later.jpg", seed: 43)
            try await fling(f, client, then: target)
            try await f.logs.wait(for: Self.held, slot: "main#3")
            // The dwell is a minute; the fling ends 250 ms after the recycles.
            let answer = try await client.answer(20, timeout: 40).answer
            #expect(answer.resultObject?["source"] as? String == "network")
            #expect(f.logs.events("held request starts").contains { $0.metadata["slot"] == "main#3" })
            releaseAll(f)
            await client.close()
        }
    }

    @Test("a cache hit during a fling answers at once, never held")
    func hitsAreNeverHeld() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .seconds(60) }) { f in
            let client = try await f.connect()
            let warm = f.serve("/warm.jpg", seed: 44)
            #expect(try await client.ask(100, "thumbnail.show", ["slot": 9, "url": warm]).resultObject != nil)
            try await fling(f, client, then: warm)
            let answer = try await client.answer(20, timeout: 40).answer
            #expect(answer.resultObject?["source"] as? String == "memory")
            #expect(!f.logs.events(Self.held).contains { $0.metadata["slot"] == "main#3" })
            releaseAll(f)
            await client.close()
        }
    }

    @Test("a calm first screen of slots shown at once is never held")
    func calmIsNeverHeld() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .seconds(60) }) { f in
            let client = try await f.connect()
            let lines = (0..<8).map { slot in
                rpcLine(slot + 1, "thumbnail.show", ["slot": slot, "url": f.serve("/calm-\(slot).jpg", seed: UInt64(slot + 50))])
            }
            try await client.send(bytes: Array(lines.map { $0 + "\n" }.joined().utf8))
            let answers = try await client.answers(for: Set(1...8))
            for (id, answer) in answers { #expect(answer.resultObject?["source"] as? String == "network", "\(id): \(answer)") }
            #expect(f.logs.events(Self.held).isEmpty)
            await client.close()
        }
    }

    @Test("a calm scroll (recycles of delivered slots) is never held")
    func calmScrollIsNeverHeld() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .seconds(60) }) { f in
            let client = try await f.connect()
            var id = 0
            for slot in 0..<6 {
                id += 1
                let url = f.serve("/scroll-\(slot).jpg", seed: UInt64(slot + 70))
                #expect(try await client.ask(id, "thumbnail.show", ["slot": slot % 2, "url": url]).resultObject != nil)
                id += 1
                #expect(try await client.ask(id, "thumbnail.recycle", ["slot": slot % 2]).resultObject?["cancelled"] as? Bool == false)
            }
            #expect(f.logs.events(Self.held).isEmpty)
            await client.close()
        }
    }
}
