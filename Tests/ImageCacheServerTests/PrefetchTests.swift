import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// `prefetch` and `prefetch.cancel` through the daemon's socket: background loads into the
/// caches, one `prefetch.finished` per item, withdrawn by cancel or by closing the session.
@Suite("Prefetch through the daemon socket", .timeLimit(.minutes(5)))
struct PrefetchTests {
    /// Reads until `count` `prefetch.finished` notifications and the answer `id` arrived.
    private func finished(_ client: RawClient, count: Int, answer id: Int) async throws -> (answer: [String: Any], finished: [[String: Any]]) {
        let messages = try await client.collect { messages in
            messages.contains { $0["id"] as? Int == id }
                && messages.filter { $0.notificationMethod == "prefetch.finished" }.count >= count
        }
        let answer = try #require(messages.first { $0["id"] as? Int == id })
        return (answer, messages.filter { $0.notificationMethod == "prefetch.finished" }.map(\.params))
    }

    @Test("items load into the caches, each reported finished; a show then hits")
    func prefetchWarmsCaches() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let a = f.serve("/p-a.jpg", seed: 1)
            let b = f.serve("/p-b.jpg", seed: 2)
            try await client.send(rpcLine(1, "prefetch", ["urls": [a, b], "size": 128]))
            let (answer, items) = try await finished(client, count: 2, answer: 1)
            #expect(answer.resultObject?["queued"] as? Int == 2)
            #expect(Set(items.compactMap { $0["url"] as? String }) == [a, b])
            #expect(items.allSatisfy { $0["ok"] as? Bool == true && $0["error"] is NSNull })

            let shown = try #require(try await client.ask(2, "thumbnail.show", ["slot": 0, "url": a, "size": 128]).resultObject)
            #expect(shown["source"] as? String == "memory")
            #expect(f.images.counters.requests("/p-a.jpg") == 1)

            // An item already cached is reported at once and not queued.
            try await client.send(rpcLine(3, "prefetch", ["urls": [b], "size": 128]))
            let (again, repeated) = try await finished(client, count: 1, answer: 3)
            #expect(again.resultObject?["queued"] as? Int == 0)
            #expect(repeated.first?["ok"] as? Bool == true)
            #expect(f.images.counters.requests("/p-b.jpg") == 1)
            await client.close()
        }
    }

    @Test("an unknown photo id finishes with 1006 and is not queued")
    func unknownPhoto() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            try await client.send(rpcLine(1, "prefetch", ["photos": ["unsplash:nobody"]]))
            let (answer, items) = try await finished(client, count: 1, answer: 1)
            #expect(answer.resultObject?["queued"] as? Int == 0)
            let item = try #require(items.first)
            #expect(item["photo"] as? String == "unsplash:nobody")
            #expect(item["ok"] as? Bool == false)
            #expect((item["error"] as? [String: Any])?["code"] as? Int == 1006)
            await client.close()
        }
    }

    @Test("prefetching photos by id works like URLs")
    func photos() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let ids = Array(try await f.photoIDs(client: client, id: 1, count: 3))
            try await client.send(rpcLine(2, "prefetch", ["photos": ids, "size": 64]))
            let (answer, items) = try await finished(client, count: ids.count, answer: 2)
            #expect(answer.resultObject?["queued"] as? Int == ids.count)
            #expect(Set(items.compactMap { $0["photo"] as? String }) == Set(ids))
            #expect(items.allSatisfy { $0["ok"] as? Bool == true })
            await client.close()
        }
    }

    @Test("prefetch.cancel withdraws an item: finished with 1007 and its transfer stops")
    func cancelWithdraws() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            f.images.serve("/p-slow.jpg", body: SyntheticImages.jpeg(approximateBytes: 400_000), faults: [.stall(afterBytes: 20_000)])
            let url = f.images.url("/p-slow.jpg")
            #expect(try await client.ask(1, "prefetch", ["urls": [url]]).resultObject?["queued"] as? Int == 1)
            try await f.waitForServer { $0.requests("/p-slow.jpg") == 1 }
            try await client.send(rpcLine(2, "prefetch.cancel", ["urls": [url]]))
            let (answer, items) = try await finished(client, count: 1, answer: 2)
            #expect(answer.resultObject?["cancelled"] as? Int == 1)
            #expect(items.first?["ok"] as? Bool == false)
            #expect((items.first?["error"] as? [String: Any])?["code"] as? Int == 1007)
            try await f.waitForServer { $0.aborted("/p-slow.jpg") == 1 }
            #expect(try await client.ask(3, "prefetch.cancel", [:]).resultObject?["cancelled"] as? Int == 0)
            await client.close()
        }
    }

    @Test("closing the session cancels its prefetches")
    func closeCancels() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            f.images.serve("/p-close.jpg", body: SyntheticImages.jpeg(approximateBytes: 400_000), faults: [.stall(afterBytes: 20_000)])
            #expect(try await client.ask(1, "prefetch", ["urls": [f.images.url("/p-close.jpg")]]).resultObject?["queued"] as? Int == 1)
            try await f.waitForServer { $0.requests("/p-close.jpg") == 1 }
            await client.close()
            try await f.waitForServer { $0.aborted("/p-close.jpg") == 1 }
        }
    }

    @Test("over max_pending_per_session queued items the request is 1012 busy and nothing starts")
    func cap() async throws {
        try await ThumbnailFixture.with(configure: { $0.daemon.maxPendingPerSession = 2 }) { f in
            let client = try await f.connect()
            let urls = (0..<3).map { f.serve("/cap-\($0).jpg", seed: UInt64($0), faults: [.held]) }
            let answer = try await client.ask(1, "prefetch", ["urls": urls])
            #expect(answer.errorCode == 1012)
            #expect(answer.errorKind == "busy")
            #expect(f.images.counters.totalRequests == 0)
            #expect(try await client.ask(2, "prefetch", ["urls": Array(urls.prefix(2))]).resultObject?["queued"] as? Int == 2)
            #expect(try await client.ask(3, "prefetch", ["urls": [urls[2]]]).errorCode == 1012)
            for url in 0..<3 { f.images.release("/cap-\(url).jpg") }
            await client.close()
        }
    }

    @Test("a prefetched image made visible jumps ahead of other prefetches")
    func priorityUpgrade() async throws {
        try await ThumbnailFixture.with(configure: {
            $0.network.maxConnections = 1
            $0.network.maxConnectionsPerHost = 1
        }) { f in
            let client = try await f.connect()
            let blocker = f.serve("/blocker.jpg", seed: 1, faults: [.held])
            let first = f.serve("/first.jpg", seed: 2)
            let second = f.serve("/second.jpg", seed: 3)
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": blocker]))
            try await f.waitForServer { $0.requests("/blocker.jpg") == 1 }
            try await client.send(rpcLine(2, "prefetch", ["urls": [first, second]]))
            try await f.waitForDemands(3)
            try await client.send(rpcLine(3, "thumbnail.show", ["slot": 1, "url": second]))
            try await f.waitForDemands(4)
            f.images.release("/blocker.jpg")
            _ = try await client.collect { messages in
                messages.contains { $0["id"] as? Int == 3 }
                    && messages.filter { $0.notificationMethod == "prefetch.finished" }.count == 2
            }
            let order = f.images.counters.arrivals.filter { $0 != "/blocker.jpg" }
            #expect(order == ["/second.jpg", "/first.jpg"])
            await client.close()
        }
    }
}
