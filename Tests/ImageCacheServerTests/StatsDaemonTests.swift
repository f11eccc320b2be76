import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// The full `stats` of docs/protocol.md through a real daemon on a real socket: every section and
/// figure present with its type, limits from the configuration, figures that move with real
/// work, search pages counted on disk.
@Suite("stats on the socket", .timeLimit(.minutes(5)))
struct StatsDaemonTests {
    private func stats(_ client: RawClient, _ id: Int) async throws -> [String: Any] {
        try #require(try await client.request(id, "stats").resultObject)
    }

    private func section(_ stats: [String: Any], _ name: String) throws -> [String: Int] {
        let object = try #require(stats[name] as? [String: Any], "no \(name) in \(stats)")
        var figures: [String: Int] = [:]
        for (key, value) in object {
            figures[key] = try #require(value as? Int, "\(name).\(key) is not an integer: \(value)")
        }
        return figures
    }

    @Test("stats has every section and figure of the contract, limits from the configuration")
    func shape() async throws {
        try await CacheFixture.with { fixture in
            let configuration = fixture.configuration()
            try await SearchDaemon.with(configuration) { daemon in
                let client = try await daemon.connect()
                let answer = try await stats(client, 1)

                #expect(Set(answer.keys) == ["memory", "disk", "network", "providers", "sessions", "uptimeSeconds"])
                let tierFields: Set<String> = ["entries", "bytes", "limit", "hits", "misses"]
                let memory = try section(answer, "memory")
                let disk = try section(answer, "disk")
                #expect(Set(memory.keys) == tierFields)
                #expect(Set(disk.keys) == tierFields)
                #expect(memory["limit"] == configuration.cache.memoryLimit)
                #expect(disk["limit"] == configuration.cache.diskLimit)
                #expect(Set(try section(answer, "network").keys) == ["inFlight", "queued", "requests", "bytesReceived", "bytesDiscarded"])
                #expect(answer["sessions"] as? Int == 1)
                #expect(answer["uptimeSeconds"] is Int)
                let providers = try #require(answer["providers"] as? [String: Any])
                #expect(Set(providers.keys) == ["unsplash", "flickr", "pixabay"])
                await client.close()
            }
        }
    }

    @Test("a thumbnail fetch moves the network and disk figures; a cached lookup counts a memory hit")
    func figuresMove() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                let before = try await stats(client, 1)

                let delivered = try await daemon.thumbnail(ids[0])
                _ = try #require(try await daemon.cachedThumbnail(ids[0]))
                let after = try await stats(client, 2)

                let network = (try section(before, "network"), try section(after, "network"))
                #expect(network.1["requests"]! > network.0["requests"]!)
                #expect(network.1["bytesReceived"]! >= network.0["bytesReceived"]! + delivered.bytes / 2)
                #expect(network.1["inFlight"] == 0)
                let disk = (try section(before, "disk"), try section(after, "disk"))
                #expect(disk.1["entries"]! > disk.0["entries"]!)
                #expect(disk.1["bytes"]! >= disk.0["bytes"]! + delivered.bytes)
                let memory = (try section(before, "memory"), try section(after, "memory"))
                #expect(memory.1["hits"]! > memory.0["hits"]!)
                #expect(memory.1["entries"]! > memory.0["entries"]!)
                await client.close()
            }
        }
    }

    @Test("search pages count in the disk figures, and cache.clear searches takes them out")
    func searchPagesOnDisk() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let empty = try section(try await stats(client, 1), "disk")
                _ = try await daemon.searchPhotos(client, perPage: 10)
                let searched = try section(try await stats(client, 2), "disk")
                // One page and its ten remembered photos.
                #expect(searched["entries"]! == empty["entries"]! + 11)
                #expect(searched["bytes"]! > empty["bytes"]!)

                _ = try #require(try await client.request(3, "cache.clear", ["what": "searches"]).resultObject)
                let cleared = try section(try await stats(client, 4), "disk")
                #expect(cleared["entries"]! == searched["entries"]! - 1)
                #expect(cleared["bytes"]! < searched["bytes"]!)
                await client.close()
            }
        }
    }
}

/// Limits a reload changes reach the cache and its `stats` at once.
@Suite("stats limits after a reload", .timeLimit(.minutes(3)))
struct StatsReloadTests {
    @Test("applying a reloaded configuration changes the limits stats reports and trims the memory tier")
    func appliedLimits() async throws {
        try await CacheFixture.with { fixture in
            var configuration = fixture.configuration()
            try await SearchDaemon.with(configuration) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await daemon.thumbnail(ids[0])
                #expect(daemon.services.cache.statistics.memory.entries > 0)

                configuration.cache.memoryLimit = 1
                configuration.cache.diskLimit = 5 << 20
                daemon.services.apply(configuration)
                let stats = try #require(try await client.request(1, "stats").resultObject)
                #expect((stats["memory"] as? [String: Any])?["limit"] as? Int == 1)
                #expect((stats["disk"] as? [String: Any])?["limit"] as? Int == 5 << 20)
                #expect((stats["memory"] as? [String: Any])?["entries"] as? Int == 0)
                await client.close()
            }
        }
    }
}
