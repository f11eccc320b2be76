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
    /// `next` on slot `base + 3` in one write (so the recycles fall well within 250 ms).
    /// Request ids are `base * 100 + …`; the show of `next` is `base * 100 + 20`.
    private func fling(_ f: ThumbnailFixture, _ client: RawClient, then next: String, base: Int = 0) async throws {
        for slot in base..<base + 3 {
            let url = f.serve("/fling-\(slot).jpg", seed: UInt64(slot + 10), faults: [.held])
            try await client.send(rpcLine(base * 100 + slot - base + 1, "thumbnail.show", ["slot": slot, "url": url]))
        }
        try await f.waitForServer { c in (base..<base + 3).allSatisfy { c.requests("/fling-\($0).jpg") == 1 } }
        let lines = (0..<3).map { rpcLine(base * 100 + 10 + $0, "thumbnail.recycle", ["slot": base + $0]) }
            + [rpcLine(base * 100 + 20, "thumbnail.show", ["slot": base + 3, "url": next])]
        try await client.send(bytes: Array(lines.map { $0 + "\n" }.joined().utf8))
        let ids = Set((1...3).map { base * 100 + $0 } + (10...12).map { base * 100 + $0 })
        let recycled = try await client.answers(for: ids)
        for id in 1...3 { #expect(recycled[base * 100 + id]?.errorReason == "recycled") }
        for id in 10...12 { #expect(recycled[base * 100 + id]?.resultObject?["cancelled"] as? Bool == true) }
    }

    private func releaseAll(_ f: ThumbnailFixture, base: Int = 0) {
        for slot in base..<base + 3 { f.images.release("/fling-\(slot).jpg") }
    }

    @Test("a slot recycled while held during a fling never reaches the network")
    func heldRecycledNeverFetches() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.flingDwell = .seconds(60) }) { f in
        let client = try await f.connect()
        // The fling ends 250 ms after the recycles: a machine too loaded to send the recycle
        // within that time sees the request start (the daemon logs which), and that attempt
        // proves nothing; so up to five attempts, each on fresh slots, until one is in time.
        var proved = false
        for attempt in 0..<5 where !proved {
            let base = attempt * 10
            let path = "/never-\(attempt).jpg"
            let target = f.serve(path, seed: UInt64(42 + attempt))
            try await fling(f, client, then: target, base: base)
            try await f.logs.wait(for: Self.held, slot: "main#\(base + 3)")
            try await client.send(rpcLine(base * 100 + 21, "thumbnail.recycle", ["slot": base + 3]))
            let answers = try await client.answers(for: [base * 100 + 20, base * 100 + 21])
            let outcome = try await f.logs.wait(for: "held request withdrawn", "held request starts", slot: "main#\(base + 3)")
            if outcome == "held request withdrawn" {
                proved = true
                #expect(answers[base * 100 + 20]?.errorReason == "recycled")
                #expect(answers[base * 100 + 21]?.resultObject?["cancelled"] as? Bool == true)
                #expect(f.images.counters.requests(path) == 0)
            }
            releaseAll(f, base: base)
        }
        withKnownIssue("the machine was too slow to recycle within any fling", isIntermittent: true) {
            #expect(proved)
        }
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
