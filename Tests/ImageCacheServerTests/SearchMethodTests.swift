import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// `search` through the daemon's socket, for each provider, against the simulator over real
/// loopback HTTP and the libcurl engine. The simulator's request counts prove "no request".
@Suite("Search through the daemon socket", .timeLimit(.minutes(5)))
struct SearchMethodTests {
    static let providers = ["unsplash", "flickr", "pixabay"]

    @Test("a page reports total, totalPages and hasMore; the last page has no more", arguments: providers)
    func paginationReportsTotals(provider: String) async throws {
        try await SearchFixture.with { fixture in
            fixture.api.setTotal(25, for: provider, query: "mountain lake")
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                let first = try #require(try await client.request(1, "search",
                    ["query": "mountain lake", "provider": provider, "perPage": 10]).resultObject)
                #expect(first["total"] as? Int == 25)
                #expect(first["totalPages"] as? Int == 3)
                #expect(first["hasMore"] as? Bool == true)
                #expect((first["photos"] as? [Any])?.count == 10)
                #expect(first["fromCache"] as? Bool == false)
                #expect(first["stale"] as? Bool == false)

                let last = try #require(try await client.request(2, "search",
                    ["query": "mountain lake", "provider": provider, "perPage": 10, "page": 3]).resultObject)
                #expect(last["hasMore"] as? Bool == false)
                #expect((last["photos"] as? [Any])?.count == 5)
                #expect(fixture.api.requestCount(provider) == 2)

                await client.close()
            }
        }
    }

    @Test("a page beyond a known totalPages is empty and costs no request", arguments: providers)
    func pageBeyondKnownTotalPages(provider: String) async throws {
        try await SearchFixture.with { fixture in
            fixture.api.setTotal(25, for: provider, query: "mountain lake")
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                _ = try #require(try await client.request(1, "search",
                    ["query": "mountain lake", "provider": provider, "perPage": 10]).resultObject)
                #expect(fixture.api.requestCount(provider) == 1)
                let beyond = try #require(try await client.request(2, "search",
                    ["query": "mountain lake", "provider": provider, "perPage": 10, "page": 4]).resultObject)
                #expect((beyond["photos"] as? [Any])?.isEmpty == true)
                #expect(beyond["hasMore"] as? Bool == false)
                #expect(beyond["totalPages"] as? Int == 3)
                #expect(fixture.api.requestCount(provider) == 1)

                await client.close()
            }
        }
    }

    @Test("a query under 3 characters answers 1001 before any request", arguments: providers)
    func shortQueryRefused(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                let answer = try await client.request(1, "search", ["query": "  ab  ", "provider": provider])
                #expect(answer.errorCode == 1001)
                #expect(answer.errorKind == "query_too_short")
                #expect(fixture.api.requestCount(provider) == 0)

                await client.close()
            }
        }
    }

    @Test("typeahead: a superseded debounced search answers 1007 and never reaches the provider", arguments: providers)
    func typeaheadSupersedes(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                try await client.send(rpcLine(1, "search", ["query": "mou", "provider": provider, "channel": "box",
                                                            "debounceMs": 10_000]))
                try await daemon.waitForPendingSearches(1)
                try await client.send(rpcLine(2, "search", ["query": "mountain", "provider": provider, "channel": "box",
                                                            "debounceMs": 0]))
                let answers = try await client.answers(for: [1, 2])

                let older = try #require(answers[1])
                #expect(older.errorCode == 1007)
                #expect(older.errorData["reason"] as? String == "superseded")
                let newer = try #require(answers[2]?.resultObject)
                #expect(newer["query"] as? String == "mountain")
                let requests = fixture.api.requests(provider)
                #expect(requests.count == 1)
                #expect(requests.allSatisfy { $0.uri.contains("mountain") })

                await client.close()
            }
        }
    }

    @Test("searches without a channel run side by side; neither supersedes the other", arguments: providers)
    func searchesWithoutChannelCoexist(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                try await client.send(rpcLine(1, "search", ["query": "red car", "provider": provider, "debounceMs": 200]))
                try await client.send(rpcLine(2, "search", ["query": "red car", "provider": provider, "page": 2, "debounceMs": 0]))
                let answers = try await client.answers(for: [1, 2])
                #expect(answers[1]?.resultObject?["page"] as? Int == 1)
                #expect(answers[2]?.resultObject?["page"] as? Int == 2)
                #expect(fixture.api.requestCount(provider) == 2)

                await client.close()
            }
        }
    }

    @Test("identical searches from two sessions make one upstream request", arguments: providers)
    func identicalSearchesShareOneRequest(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let alice = try await daemon.connect()
                let bob = try await daemon.connect()

                let params: [String: Any] = ["query": "harbour lights", "provider": provider, "debounceMs": 300]
                try await alice.send(rpcLine(1, "search", params))
                try await bob.send(rpcLine(1, "search", params))
                let a = try #require(try await alice.readMessage().resultObject)
                let b = try #require(try await bob.readMessage().resultObject)
                let ids = { (page: [String: Any]) in (page["photos"] as? [[String: Any]])?.compactMap { $0["id"] as? String } }
                #expect(ids(a) == ids(b))
                #expect(ids(a)?.isEmpty == false)
                #expect(fixture.api.requestCount(provider) == 1)

                await alice.close()
                await bob.close()
            }
        }
    }

    @Test("a provider without a key answers 1002 naming the setting and variable, with no request", arguments: providers)
    func missingKeyNamesTheSetting(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(keys: [provider: nil])) { daemon in
                let client = try await daemon.connect()

                let answer = try await client.request(1, "search", ["query": "forest", "provider": provider])
                #expect(answer.errorCode == 1002)
                let message = (answer["error"] as? [String: Any])?["message"] as? String ?? ""
                let id = try #require(ProviderID(rawValue: provider))
                #expect(message.contains(id.configKey))
                #expect(message.contains(id.environmentVariable))
                #expect(fixture.api.requestCount(provider) == 0)

                await client.close()
            }
        }
    }

    @Test("a quota answer is 1004 with retryAfter", arguments: providers)
    func quotaAnswerIsRateLimited(provider: String) async throws {
        try await SearchFixture.with { fixture in
            if provider == "flickr" {
                // Flickr has no quota headers; its throttling comes as a plain 429.
                fixture.api.setFault(.status(429, body: "Too Many Requests"), for: provider)
            } else {
                fixture.api.setQuota(.init(limit: 50, remaining: 0, resetAfter: 30), for: provider)
            }
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                let answer = try await client.request(1, "search", ["query": "forest", "provider": provider])
                #expect(answer.errorCode == 1004)
                #expect(answer.errorKind == "rate_limited")
                let retryAfter = try #require(answer.errorData["retryAfter"] as? Double)
                #expect(retryAfter > 0)

                await client.close()
            }
        }
    }

    @Test("an answer that is not JSON is 1003", arguments: providers)
    func notJSONIsUpstreamError(provider: String) async throws {
        try await SearchFixture.with { fixture in
            fixture.api.setFault(.malformedBody, for: provider)
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()

                let answer = try await client.request(1, "search", ["query": "forest", "provider": provider])
                #expect(answer.errorCode == 1003)
                #expect(answer.errorKind == "upstream_error")

                await client.close()
            }
        }
    }

    @Test("stats.providers counts requests and the quota left; hello says which providers have a key")
    func statsAndHelloShowProviders() async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(keys: ["flickr": nil])) { daemon in
                let client = try await daemon.connect()

                _ = try #require(try await client.request(1, "search", ["query": "forest", "provider": "unsplash"]).resultObject)
                _ = try await client.request(2, "search", ["query": "forest", "provider": "flickr"])
                let stats = try #require(try await client.request(3, "stats").resultObject)
                let providers = try #require(stats["providers"] as? [String: [String: Any]])
                #expect(providers["unsplash"]?["requests"] as? Int == 1)
                #expect(providers["unsplash"]?["errors"] as? Int == 0)
                #expect(providers["unsplash"]?["rateLimitRemaining"] as? Int == 4_999)
                #expect(providers["flickr"]?["requests"] as? Int == 0)
                #expect(providers["pixabay"]?["rateLimitRemaining"] is NSNull)

                let hello = try #require(try await client.request(4, "hello").resultObject)
                let configured = (hello["providers"] as? [[String: Any]] ?? []).reduce(into: [String: Bool]()) {
                    $0[$1["name"] as? String ?? ""] = $1["configured"] as? Bool
                }
                #expect(configured == ["unsplash": true, "flickr": false, "pixabay": true])

                await client.close()
            }
        }
    }
}
