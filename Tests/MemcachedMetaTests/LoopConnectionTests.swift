import NIOCore
import NIOPosix
import Testing
import TestSupport
@testable import MemcachedMeta

@Suite("memcached meta client: a request made on an event loop", .timeLimit(.minutes(1)))
struct LoopConnectionTests {
    /// Runs `operation` started on `loop`'s own thread (as the daemon's arrival step starts a
    /// show's tier read), returning its result.
    static func onLoop<T: Sendable>(_ loop: any EventLoop, _ operation: @escaping @Sendable () async -> T) async -> T {
        await withCheckedContinuation { done in
            loop.execute {
                Task.immediate { done.resume(returning: await operation()) }
            }
        }
    }

    /// Connections the server accepted, less those the questions themselves opened (each
    /// `stats` is a connection of its own).
    final class Accepted {
        let server: MemcachedServer
        private var asked = 0
        init(_ server: MemcachedServer) { self.server = server }
        func count() throws -> Int {
            asked += 1
            return try #require(try server.statistic("total_connections")) - asked
        }
    }

    @Test("goes over that loop's own connection, made once per loop; off the loops, the round-robin one")
    func ownConnection() async throws {
        let server = try await MemcachedServer.start()
        var configuration = MemcachedClient.Configuration()
        configuration.timeout = .seconds(5)
        configuration.connectionsPerNode = 1
        let client = MemcachedClient(servers: [ClientTests.address(server.address)], configuration: configuration,
                                     group: MultiThreadedEventLoopGroup.singleton)
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let a = loops.next(), b = loops.next()
        #expect(a !== b)

        let accepted = Accepted(server)
        let start = try accepted.count()
        #expect(await client.set("k", [1, 2, 3], ttl: .seconds(60)) == .stored)
        #expect(try accepted.count() == start + 1)

        #expect(await Self.onLoop(a) { await client.get("k") } == .hit([1, 2, 3]))
        #expect(try accepted.count() == start + 2)
        #expect(await Self.onLoop(a) { await client.set("k", [4], ttl: .seconds(60)) } == .stored)
        #expect(await Self.onLoop(a) { await client.get("k") } == .hit([4]))
        #expect(try accepted.count() == start + 2)
        #expect(await Self.onLoop(b) { await client.get("k") } == .hit([4]))
        #expect(try accepted.count() == start + 3)
        #expect(await client.get("k") == .hit([4]))
        #expect(try accepted.count() == start + 3)
        #expect(client.statistics[0].errors == 0)

        await client.shutdown()
        #expect(await Self.onLoop(a) { await client.get("k") } == .unavailable)
        #expect(try accepted.count() == start + 3)
        try await loops.shutdownGracefully()
    }

    @Test("a loop's connection to a killed node is dropped with the ejection; the node restarted, the loop connects anew")
    func ejectedAndBack() async throws {
        let server = try await MemcachedServer.start()
        let client = ClientTests.client([server.address], retryAfter: .milliseconds(200))
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = loops.next()
        #expect(await Self.onLoop(loop) { await client.set("k", [1], ttl: .seconds(60)) } == .stored)
        await server.kill()
        for _ in 0..<3 { #expect(await Self.onLoop(loop) { await client.get("k") } == .unavailable) }
        #expect(client.statistics[0].state == "ejected")
        try await server.restart()
        let accepted = Accepted(server)
        let start = try accepted.count()
        // Ejection is a span of time by design: ask until the probe reaches the restarted node.
        let probed = try await poll(seconds: 10) { () -> MemcachedClient.Lookup? in
            let found = await Self.onLoop(loop) { await client.get("k") }
            return found == .unavailable ? nil : found
        }
        #expect(probed == .miss)
        #expect(await Self.onLoop(loop) { await client.set("k", [2], ttl: .seconds(60)) } == .stored)
        #expect(await Self.onLoop(loop) { await client.get("k") } == .hit([2]))
        #expect(try accepted.count() == start + 1)
        #expect(client.statistics[0].state == "up")
        await client.shutdown()
        try await loops.shutdownGracefully()
    }
}
