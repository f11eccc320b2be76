import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import MemcachedMeta
import NIOPosix
import ProviderSimulator
import Testing
import TestSupport

/// The search half of the fleet's shared tier with real memcached nodes, real
/// daemons and the provider simulator, which counts every API request: pages, photo records
/// and `photo.get` details shared between hosts; fleet-wide provider budgets; a quota answer
/// on one host stopping the others; corrupt values read as misses; the tier down changing
/// nothing.
@Suite("Fleet: shared search pages, photos and provider budgets", .timeLimit(.minutes(3)))
struct FleetSearchTests {
    static var harbour: [String: Any] { ["query": "quiet harbour", "provider": "pixabay", "perPage": 10] }

    /// What the budget test needs of one answer.
    struct Outcome: Sendable {
        var fromProvider: Bool
        var errorCode: Int?
        var retryAfter: Double?
    }

    static func ids(_ answer: [String: Any]?) -> [String] {
        (answer?["photos"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// The window index the budgets count in now (as `FleetBudget` computes it).
    static func window(_ seconds: Int64) -> Int64 { Int64(Date().timeIntervalSince1970) / seconds }

    @Test("host B answers a search, photo.get and a thumbnail that only host A made, with no upstream request")
    func hostBAnswersFromTheTier() async throws {
        try await FleetFixture.with(hosts: 2, nodes: 2) { fleet in
            let api = fleet.sim.api
            let a = try await fleet.hosts[0].connect()
            let b = try await fleet.hosts[1].connect()

            let searched = try #require(try await a.ask(1, "search", Self.harbour).resultObject)
            let first = try #require(Self.ids(searched).first)
            let details = try #require(try await a.ask(2, "photo.get", ["photo": first]).resultObject)
            // A photo only host A ever returned: B never runs this search.
            let other = try #require(Self.ids(try await a.ask(3, "search", ["query": "old bridge", "provider": "pixabay",
                                                                            "perPage": 5]).resultObject).first)
            let shownOnA = try #require(try await a.ask(4, "thumbnail.show", ["slot": 0, "photo": other, "size": 96]).resultObject)
            #expect(shownOnA["source"] as? String == "network")
            try await fleet.hosts[0].waitForTierWrites(1)
            #expect(api.requestCount("pixabay") == 3)

            let again = try #require(try await b.ask(1, "search", Self.harbour).resultObject)
            #expect(again["fromCache"] as? Bool == true)
            #expect(again["stale"] as? Bool == false)
            #expect(Self.ids(again) == Self.ids(searched))
            #expect(try again.decoded(as: SearchResult.self).total == searched.decoded(as: SearchResult.self).total)
            let detailsOnB = try #require(try await b.ask(2, "photo.get", ["photo": first]).resultObject)
            #expect(detailsOnB["id"] as? String == first)
            #expect(try details.decoded(as: Photo.self).views != nil, "\(details)")
            #expect(try detailsOnB.decoded(as: Photo.self) == details.decoded(as: Photo.self))
            let shownOnB = try #require(try await b.ask(3, "thumbnail.show", ["slot": 0, "photo": other, "size": 96]).resultObject)
            #expect(shownOnB["source"] as? String == "shared")
            #expect(try shownOnB.decoded(as: ThumbnailShowResult.self).width == shownOnA.decoded(as: ThumbnailShowResult.self).width)
            #expect(api.requestCount("pixabay") == 3)

            await a.close()
            await b.close()
        }
    }

    @Test("a fleet budget of 10 Pixabay requests per window is never passed by two hosts together")
    func budgetIsFleetWide() async throws {
        try await FleetFixture.with(hosts: 2, nodes: 2, configure: { _, c in
            c.pixabay.budget = 10
            c.pixabay.budgetWindow = .seconds(3600)
        }) { fleet in
            // Before any request, stats shows each budget as configured.
            let observer = try await fleet.hosts[1].connect()
            let before = try #require(try await observer.ask(1, "stats").resultObject?["shared"] as? [String: Any])
            let configured = try #require((before["budgets"] as? [String: Any])?["pixabay"] as? [String: Any])
            #expect(configured["used"] as? Int == 0 && configured["limit"] as? Int == 10)
            #expect((before["budgets"] as? [String: Any])?["flickr"] != nil)
            await observer.close()
            let firstWindow = Self.window(3600)
            // 24 different searches, 12 per host, all at once (one connection each).
            let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
                for index in 0..<24 {
                    let host = fleet.hosts[index % 2]
                    group.addTask {
                        let client = try await host.connect()
                        let answer = try await client.ask(1, "search", ["query": "budget test \(index)", "provider": "pixabay", "perPage": 3])
                        await client.close()
                        return Outcome(fromProvider: answer.resultObject?["fromCache"] as? Bool == false, errorCode: answer.errorCode,
                                       retryAfter: answer.errorData["retryAfter"] as? Double)
                    }
                }
                return try await group.reduce(into: [Outcome]()) { $0.append($1) }
            }
            let windows = Int(Self.window(3600) - firstWindow + 1)
            let sent = fleet.sim.api.requestCount("pixabay")
            let refused = outcomes.filter { $0.errorCode == 1004 }
            #expect(sent <= 10 * windows, "\(sent) requests in \(windows) window(s)")
            if windows == 1 { #expect(sent == 10) }
            #expect(outcomes.filter(\.fromProvider).count == sent)
            #expect(refused.count == 24 - sent)
            for outcome in refused {
                let retryAfter = try #require(outcome.retryAfter)
                #expect(retryAfter > 0 && retryAfter <= 3600)
            }
            let client = try await fleet.hosts[1].connect()
            let stats = try #require(try await client.ask(1, "stats").resultObject?["shared"] as? [String: Any])
            let budget = try #require((stats["budgets"] as? [String: Any])?["pixabay"] as? [String: Any])
            #expect(budget["limit"] as? Int == 10)
            #expect(budget["windowSeconds"] as? Int == 3600)
            #expect((budget["used"] as? Int ?? 0) > 10)
            #expect(budget["stoppedUntil"] is NSNull)
            await client.close()
        }
    }

    @Test("with the fleet's budget spent, a stored page answers stale; without one, 1004 and no request")
    func spentBudgetAnswersStale() async throws {
        // search_ttl 0: every page is expired at once, so the second search must ask again.
        try await FleetFixture.with(hosts: 1, nodes: 1, configure: { _, c in
            c.pixabay.budget = 1
            // An hour, so a loaded machine cannot see the window end between the searches.
            c.pixabay.budgetWindow = .seconds(3600)
            c.cache.searchTTL = .zero
        }) { fleet in
            let client = try await fleet.hosts[0].connect()
            let fresh = try #require(try await client.ask(1, "search", Self.harbour).resultObject)
            #expect(fresh["fromCache"] as? Bool == false)
            let stale = try #require(try await client.ask(2, "search", Self.harbour).resultObject)
            #expect(stale["stale"] as? Bool == true)
            #expect(stale["fromCache"] as? Bool == true)
            #expect(Self.ids(stale) == Self.ids(fresh))
            let refused = try await client.ask(3, "search", ["query": "never stored", "provider": "pixabay"])
            #expect(refused.errorCode == 1004)
            #expect((refused.errorData["retryAfter"] as? Double ?? 0) > 0)
            // photo.get: the remembered record answers.
            let photo = try #require(Self.ids(fresh).first)
            let record = try #require(try await client.ask(4, "photo.get", ["photo": photo]).resultObject)
            #expect(record["id"] as? String == photo)
            #expect(fleet.sim.api.requestCount("pixabay") == 1)
            await client.close()
        }
    }

    @Test("one host's 429 stops the other until the reset, without a request")
    func quotaAnswerStopsTheFleet() async throws {
        try await FleetFixture.with(hosts: 2, nodes: 2) { fleet in
            let api = fleet.sim.api
            api.setQuota(.init(limit: 100, remaining: 0, resetAfter: 30), for: "pixabay")
            let a = try await fleet.hosts[0].connect()
            let b = try await fleet.hosts[1].connect()
            let first = try await a.ask(1, "search", ["query": "first asker", "provider": "pixabay"])
            #expect(first.errorCode == 1004)
            #expect(api.requestCount("pixabay") == 1)
            // The provider would answer now, but the fleet waits for the reset it announced.
            api.setQuota(.init(limit: 100, remaining: 100, resetAfter: 30), for: "pixabay")
            let second = try await b.ask(1, "search", ["query": "second asker", "provider": "pixabay"])
            #expect(second.errorCode == 1004)
            let retryAfter = try #require(second.errorData["retryAfter"] as? Double)
            #expect(retryAfter > 0 && retryAfter <= 31)
            #expect(api.requestCount("pixabay") == 1)
            let stats = try #require(try await b.ask(2, "stats").resultObject?["shared"] as? [String: Any])
            let budget = try #require((stats["budgets"] as? [String: Any])?["pixabay"] as? [String: Any])
            let until = try #require(budget["stoppedUntil"] as? Double)
            #expect(until > Date().timeIntervalSince1970)
            // Other providers are not stopped.
            let flickr = try #require(try await b.ask(3, "search", ["query": "second asker", "provider": "flickr"]).resultObject)
            #expect(flickr["fromCache"] as? Bool == false)
            await a.close()
            await b.close()
        }
    }

    @Test("a corrupt or foreign search page planted in memcached is a miss: fetched again, then replaced")
    func corruptPageIsAMiss() async throws {
        try await FleetFixture.with(hosts: 2, nodes: 1) { fleet in
            let api = fleet.sim.api
            let key = SearchPageKey(provider: .pixabay, query: SearchQuery(term: .query("quiet harbour"), page: 1, perPage: 10))
            let wire = MetaKey.wire(SharedSearchRecords.pageKey(key), prefix: fleet.prefix)
            let a = try await fleet.hosts[0].connect()
            let b = try await fleet.hosts[1].connect()
            // Host A's search puts the page where the test plants: the key is the right one.
            let original = try #require(try await a.ask(1, "search", Self.harbour).resultObject)
            let valid = try #require(await SharedStoreProbe(node: fleet.nodes[0], wire: wire).value())
            let payload = Array(valid[SharedRecordFrame.headerLength...])
            let plants: [[UInt8]] = [
                Array("not a page".utf8),
                // An intact frame of another kind.
                SharedRecordFrame.encode(.photo, payload: payload),
                // An intact page frame of another search.
                SharedRecordFrame.encode(.searchPage, payload: Array(String(decoding: payload, as: UTF8.self)
                    .replacingOccurrences(of: "quiet harbour", with: "loud harbour").utf8)),
                // An intact page frame whose paging numbers were changed.
                SharedRecordFrame.encode(.searchPage, payload: Array(String(decoding: payload, as: UTF8.self)
                    .replacingOccurrences(of: "\"totalPages\":", with: "\"totalPages\":7").utf8)),
                // The valid value with one payload byte flipped.
                { var damaged = valid; damaged[damaged.count - 3] ^= 0x01; return damaged }(),
            ]
            var requests = api.requestCount("pixabay")
            for (index, plant) in plants.enumerated() {
                try fleet.nodes[0].plant(wire, plant)
                // Host B has no copy of its own: each search reads the tier, refuses, asks the provider.
                await fleet.hosts[1].daemon.search.coordinator.clearSearches()
                let answer = try #require(try await b.ask(index + 1, "search", Self.harbour).resultObject, "plant \(index)")
                #expect(answer["fromCache"] as? Bool == false, "plant \(index)")
                #expect(Self.ids(answer) == Self.ids(original))
                requests += 1
                #expect(api.requestCount("pixabay") == requests)
            }
            // The last fetch replaced the planted value: host A, emptied, gets it from the tier.
            await fleet.hosts[0].daemon.search.coordinator.clearSearches()
            let fromTier = try #require(try await a.ask(9, "search", Self.harbour).resultObject)
            #expect(fromTier["fromCache"] as? Bool == true)
            #expect(api.requestCount("pixabay") == requests)
            await a.close()
            await b.close()
        }
    }

    @Test("every node down: searches, photo.get and budgets behave as without a tier (local limits only)")
    func tierDownIsTodaysBehaviour() async throws {
        try await FleetFixture.with(hosts: 2, nodes: 2, configure: { _, c in
            c.pixabay.budget = 1
            c.shared.timeout = .milliseconds(200)
        }) { fleet in
            for node in fleet.nodes { await node.kill() }
            let a = try await fleet.hosts[0].connect()
            let b = try await fleet.hosts[1].connect()
            let started = ContinuousClock.now
            for index in 0..<3 {
                let answer = try #require(try await a.ask(index + 1, "search", ["query": "down \(index)", "provider": "pixabay"]).resultObject)
                #expect(answer["fromCache"] as? Bool == false)
            }
            let page = try #require(try await b.ask(1, "search", Self.harbour).resultObject)
            #expect(page["fromCache"] as? Bool == false)
            let photo = try #require(Self.ids(page).first)
            #expect(try await b.ask(2, "photo.get", ["photo": photo]).resultObject?["id"] as? String == photo)
            #expect(fleet.sim.api.requestCount("pixabay") == 5)
            #expect(ContinuousClock.now - started < .seconds(20 * timeoutScale), "no wait for a node that is down")
            // The local limits still apply: a quota answer is 1004, not a stale page.
            fleet.sim.api.setQuota(.init(limit: 100, remaining: 0, resetAfter: 30), for: "pixabay")
            let limited = try await b.ask(3, "search", ["query": "over quota", "provider": "pixabay"])
            #expect(limited.errorCode == 1004)
            await a.close()
            await b.close()
        }
    }
}

/// Reads a raw value from one memcached node (`mg KEY v`), bypassing any client: what the
/// corrupt-value test starts its plants from.
struct SharedStoreProbe {
    let node: MemcachedServer
    let wire: String

    func value() async -> [UInt8]? {
        var configuration = MemcachedClient.Configuration()
        configuration.timeout = .seconds(2)  // a loaded debug machine: the value must not read as a miss
        let store = MemcachedClient(servers: [MemcachedServerAddress(host: "127.0.0.1", port: node.port)],
                                    configuration: configuration, group: MultiThreadedEventLoopGroup.singleton)
        let found = await store.get(wire)
        await store.shutdown()
        guard case .hit(let value) = found else { return nil }
        return value
    }
}
