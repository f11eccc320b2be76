import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: admission, priorities and backpressure", .timeLimit(.minutes(2)))
struct NetworkSchedulingTests {
    @Test("no more transfers run at once than max_connections_per_host")
    func perHostLimitHeld() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine { $0.maxConnections = 8; $0.maxConnectionsPerHost = 2 }
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            // Held until the limit is reached, so the peak cannot depend on how fast answers come.
            server.serve("/p.jpg", body: photo, faults: [.held])
            let handles = (0..<6).map { _ in engine.start(TransferRequest(url: server.url("/p.jpg"))) }
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/p.jpg") == 2 } }
            // While the two admitted transfers are held, the other four wait in the engine's
            // queue: the limit is the engine's admission, not the server's pace. (The server's
            // own peak is not asserted after the release: it counts a response as in flight
            // until its connection's write completes, which can lag the client's completion.)
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.queued == 4 } }
            #expect(server.counters.inFlight == 2)
            #expect(server.counters.requests("/p.jpg") == 2)
            server.release("/p.jpg")
            for handle in handles { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            #expect(server.counters.requests("/p.jpg") == 6)
        }
    }

    @Test("no more transfers run at once than max_connections")
    func totalLimitHeld() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine { $0.maxConnections = 3; $0.maxConnectionsPerHost = 6 }
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/p.jpg", body: photo, faults: [.held])
            let handles = (0..<7).map { _ in engine.start(TransferRequest(url: server.url("/p.jpg"))) }
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/p.jpg") == 3 } }
            // Three held at the server and four queued in the engine: the limit is the engine's
            // admission. (Checked before the release: after it, the server counts a response
            // as in flight until its write completes, which can lag the client's completion,
            // and a fourth request could overlap a finished one there; seen once under load.)
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.queued == 4 } }
            #expect(server.counters.inFlight == 3)
            #expect(server.counters.peakInFlight == 3)
            server.release("/p.jpg")
            for handle in handles { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            #expect(server.counters.requests("/p.jpg") == 7)
        }
    }

    @Test("waiting transfers start visible first, then download, then prefetch, FIFO within one")
    func priorityOrder() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 1; $0.maxConnectionsPerHost = 1 }, options: { $0.visibleReserve = 0 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/block", body: photo, faults: [.stall(afterBytes: 10)])
            for name in ["p1", "d1", "v1", "p2", "v2", "d2"] { server.serve("/\(name)", body: photo) }
            let blocker = engine.start(TransferRequest(url: server.url("/block")))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/block") == 1 } }
            let queued: [(String, TransferPriority)] = [("p1", .prefetch), ("d1", .download), ("v1", .visible),
                                                      ("p2", .prefetch), ("v2", .visible), ("d2", .download)]
            let handles = queued.map { engine.start(TransferRequest(url: server.url("/\($0.0)"), priority: $0.1)) }
            blocker.cancel()  // commands are handled in order: every start above is queued first
            for handle in handles { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            #expect(server.counters.arrivals == ["/block", "/v1", "/v2", "/d1", "/d2", "/p1", "/p2"])
        }
    }

    @Test("a queued prefetch upgraded to visible jumps the queue")
    func upgradeJumpsQueue() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 1; $0.maxConnectionsPerHost = 1 }, options: { $0.visibleReserve = 0 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/block", body: photo, faults: [.stall(afterBytes: 10)])
            for name in ["a", "b", "c"] { server.serve("/\(name)", body: photo) }
            let blocker = engine.start(TransferRequest(url: server.url("/block")))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/block") == 1 } }
            let a = engine.start(TransferRequest(url: server.url("/a"), priority: .prefetch))
            let b = engine.start(TransferRequest(url: server.url("/b"), priority: .prefetch))
            let c = engine.start(TransferRequest(url: server.url("/c"), priority: .prefetch))
            c.setPriority(.visible)
            blocker.cancel()
            for handle in [a, b, c] { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            #expect(server.counters.arrivals == ["/block", "/c", "/a", "/b"])
        }
    }

    @Test("prefetches wait while the bodies fetched await their release; visible transfers and downloads do not")
    func prefetchLookAhead() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 4; $0.maxConnectionsPerHost = 4 },
            options: { $0.visibleReserve = 0; $0.prefetchLookAhead = 2 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            for name in ["p1", "p2", "p3", "p4", "d", "v", "v2", "up"] { server.serve("/\(name)", body: photo) }
            @Sendable func request(_ name: String, _ priority: TransferPriority) -> TransferRequest {
                var request = TransferRequest(url: server.url("/\(name)"), priority: priority)
                request.awaitsRelease = true
                return request
            }
            let first = try await withTimeout(seconds: 30) {
                try await (engine.start(request("p1", .prefetch)).result(), engine.start(request("p2", .prefetch)).result())
            }
            #expect(first.0.awaitsRelease && first.1.awaitsRelease)
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.unreleasedBodies == 2 } }
            // Two bodies in hand: the third prefetch waits; a download and a visible transfer,
            // queued after it, are admitted past it (so admission has passed it over).
            let third = engine.start(request("p3", .prefetch))
            let download = try await withTimeout(seconds: 30) { try await engine.start(request("d", .download)).result() }
            let visible = try await withTimeout(seconds: 30) { try await engine.start(request("v", .visible)).result() }
            #expect(engine.stats.queued == 1)
            #expect(server.counters.requests("/p3") == 0)
            // A held prefetch a visible demand joins goes at once.
            let upgraded = engine.start(request("up", .prefetch))
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.queued == 2 } }
            upgraded.setPriority(.visible)
            engine.release(try await withTimeout(seconds: 30) { try await upgraded.result() })
            #expect(server.counters.requests("/p3") == 0)
            // The bodies counted are those of every priority; one released lets one prefetch in.
            engine.release(download)
            engine.release(visible)
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.unreleasedBodies == 2 } }
            engine.release(try await withTimeout(seconds: 30) { try await engine.start(request("v2", .visible)).result() })
            #expect(server.counters.requests("/p3") == 0)
            engine.release(first.0)
            let thirdResult = try await withTimeout(seconds: 30) { try await third.result() }
            let fourth = engine.start(request("p4", .prefetch))
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.queued == 1 } }
            #expect(server.counters.requests("/p4") == 0)
            engine.release(first.1)
            engine.release(thirdResult)
            engine.release(try await withTimeout(seconds: 30) { try await fourth.result() })
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.unreleasedBodies == 0 } }
            #expect(server.counters.arrivals == ["/p1", "/p2", "/d", "/v", "/up", "/v2", "/p3", "/p4"]
                || server.counters.arrivals == ["/p2", "/p1", "/d", "/v", "/up", "/v2", "/p3", "/p4"])
        }
    }

    @Test("a retry of a prefetch is not held by the look-ahead: its transfer's deadline is already running")
    func retryNotHeld() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 2; $0.maxConnectionsPerHost = 2 },
            options: {
                $0.visibleReserve = 0
                $0.prefetchLookAhead = 1
                // A back-off long enough to lower the priority while the retry waits.
                $0.retry = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(1))
            })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/held", body: photo)
            server.serve("/retried", body: photo, faults: [.status(503), .none])
            server.serve("/fresh", body: photo)
            @Sendable func request(_ name: String, _ priority: TransferPriority) -> TransferRequest {
                var request = TransferRequest(url: server.url("/\(name)"), priority: priority)
                request.awaitsRelease = true
                return request
            }
            // One body in hand: the look-ahead of 1 is full.
            let inHand = try await withTimeout(seconds: 30) { try await engine.start(request("held", .prefetch)).result() }
            // A transfer admitted before (visible then) fails once and waits for its retry, a
            // prefetch by then.
            let retried = engine.start(request("retried", .visible))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/retried") == 1 } }
            try await withTimeout(seconds: 30) { try await engine.observedStats.wait { $0.queued == 1 && $0.inFlight == 0 } }
            retried.setPriority(.prefetch)
            let fresh = engine.start(request("fresh", .prefetch))
            let retriedResult = try await withTimeout(seconds: 30) { try await retried.result() }
            #expect(server.counters.requests("/retried") == 2)
            #expect(server.counters.requests("/fresh") == 0)
            engine.release(inHand)
            engine.release(retriedResult)
            engine.release(try await withTimeout(seconds: 30) { try await fresh.result() })
        }
    }

    @Test("capacity kept for visible: prefetches cannot take the last slots")
    func visibleReserve() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 2; $0.maxConnectionsPerHost = 2 }, options: { $0.visibleReserve = 1 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/stuck", body: photo, faults: [.stall(afterBytes: 10)])
            server.serve("/p2", body: photo)
            server.serve("/v", body: photo)
            let first = engine.start(TransferRequest(url: server.url("/stuck"), priority: .prefetch))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/stuck") == 1 } }
            let second = engine.start(TransferRequest(url: server.url("/p2"), priority: .prefetch))
            let visible = engine.start(TransferRequest(url: server.url("/v"), priority: .visible))
            _ = try await withTimeout(seconds: 30) { try await visible.result() }
            // The visible one got the reserved slot; the second prefetch still waits for a free one.
            #expect(server.counters.requests("/p2") == 0)
            #expect(engine.stats.queued == 1)
            first.cancel()
            _ = try await withTimeout(seconds: 30) { try await second.result() }
            #expect(server.counters.arrivals == ["/stuck", "/v", "/p2"])
        }
    }

    @Test("a full queue answers busy")
    func fullQueueIsBusy() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 1; $0.maxConnectionsPerHost = 1 }, options: { $0.maxQueued = 2 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/block", body: photo, faults: [.stall(afterBytes: 10)])
            server.serve("/p", body: photo)
            let blocker = engine.start(TransferRequest(url: server.url("/block")))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/block") == 1 } }
            let waiting = (0..<2).map { _ in engine.start(TransferRequest(url: server.url("/p"))) }
            let refused = engine.start(TransferRequest(url: server.url("/p")))
            let error = await rpcError { _ = try await withTimeout(seconds: 30) { try await refused.result() } }
            #expect(error?.kind == .busy)
            blocker.cancel()
            for handle in waiting { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            #expect(server.counters.requests("/p") == 2)
        }
    }
}
