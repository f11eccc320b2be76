import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: cancellation and coalescing", .timeLimit(.minutes(2)))
struct NetworkCancellationTests {
    @Test("cancelling a running transfer stops its bytes: the server sees the abort, the bytes count as discarded")
    func cancelStopsBytes() async throws {
        let body = SyntheticImages.jpeg(width: 400, height: 400, seed: 9)
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            // The server sends part of the body and then holds the rest for good: the transfer is
            // surely running when cancelled (however slow the machine), and only the cancel can
            // end it — a cancel that waited for the body would hit the 30 s bound instead.
            server.serve("/slow.jpg", body: body, faults: [.stall(afterBytes: 4096)])
            let log = EventLog()
            let handle = engine.start(TransferRequest(url: server.url("/slow.jpg")), events: log.handler)
            _ = try await withTimeout(seconds: 30) {
                await log.waitFor { if case .progress(let received, _) = $0 { received > 0 } else { false } }
            }
            handle.cancel(reason: "recycled")
            let error = await rpcError { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            #expect(error?.kind == .cancelled)
            #expect(error?.data.reason == "recycled")
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.aborted("/slow.jpg") == 1 } }
            #expect(server.counters.completed("/slow.jpg") == 0)
            let stats = engine.stats
            #expect(stats.bytesDiscarded > 0)
            #expect(stats.bytesDiscarded < body.count)
            #expect(stats.inFlight == 0)
        }
    }

    @Test("cancelling a queued transfer means it is never requested")
    func cancelQueuedNeverFetched() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine({ $0.maxConnections = 1; $0.maxConnectionsPerHost = 1 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            // The blocker holds the only connection for far longer than the test runs, so the
            // queued transfer cannot be admitted before its cancel however slow the machine is.
            server.serve("/block", body: photo, faults: [.latency(milliseconds: 120_000)])
            server.serve("/never", body: photo)
            let blocker = engine.start(TransferRequest(url: server.url("/block")))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/block") == 1 } }
            let queued = engine.start(TransferRequest(url: server.url("/never")))
            queued.cancel(reason: "superseded")
            let error = await rpcError { _ = try await withTimeout(seconds: 30) { try await queued.result() } }
            #expect(error?.kind == .cancelled)
            blocker.cancel(reason: "test over")
            _ = await rpcError { _ = try await withTimeout(seconds: 30) { try await blocker.result() } }
            #expect(server.counters.requests("/never") == 0)
            #expect(server.counters.totalRequests == 1)
        }
    }

    @Test("cancelling the awaiting task cancels the transfer")
    func taskCancellationCancels() async throws {
        let body = SyntheticImages.jpeg(width: 400, height: 400, seed: 10)
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/t.jpg", body: body, faults: [.stall(afterBytes: 100)])
            let task = Task { try await engine.fetch(HTTPRequest(url: server.url("/t.jpg"))) }
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/t.jpg") == 1 } }
            task.cancel()
            let error = await rpcError { _ = try await task.value }
            #expect(error?.kind == .cancelled)
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.aborted("/t.jpg") == 1 } }
        }
    }

    @Test("N demands for one key cause one transfer, and all get the body")
    func coalescedDemandsOneTransfer() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            // Held until every demand has joined: the transfer cannot end between two joins.
            server.serve("/same.jpg", body: photo, faults: [.held])
            let coalescer = TransferCoalescer<String>(engine: engine)
            let demands = (0..<8).map { _ in
                coalescer.join("same", TransferRequest(url: server.url("/same.jpg"), keepInMemory: true))
            }
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/same.jpg") == 1 } }
            server.release("/same.jpg")
            let bodies = try await withTimeout(seconds: 30) {
                try await withThrowingTaskGroup(of: TransferBody.self) { group in
                    for demand in demands { group.addTask { try await demand.result().body } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(bodies.count == 8)
            #expect(bodies.allSatisfy { $0 == .memory(photo) })
            #expect(server.counters.requests("/same.jpg") == 1)
            #expect(engine.stats.requests == 1)
            #expect(coalescer.activeKeys == 0)
        }
    }

    @Test("when every demand of a coalesced transfer is withdrawn, the transfer is cancelled")
    func lastDemandOutCancels() async throws {
        let body = SyntheticImages.jpeg(width: 400, height: 400, seed: 11)
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/gone.jpg", body: body, faults: [.stall(afterBytes: 100)])
            let coalescer = TransferCoalescer<String>(engine: engine)
            let demands = (0..<3).map { _ in coalescer.join("gone", TransferRequest(url: server.url("/gone.jpg"))) }
            let waits = demands.map { demand in Task { try await demand.result() } }
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/gone.jpg") == 1 } }
            waits[0].cancel()
            waits[1].cancel()
            #expect(await rpcError { _ = try await waits[0].value }?.kind == .cancelled)
            #expect(await rpcError { _ = try await waits[1].value }?.kind == .cancelled)
            #expect(coalescer.activeKeys == 1)  // one demand still holds it
            #expect(server.counters.aborted("/gone.jpg") == 0)
            waits[2].cancel()
            #expect(await rpcError { _ = try await waits[2].value }?.kind == .cancelled)
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.aborted("/gone.jpg") == 1 } }
            #expect(coalescer.activeKeys == 0)
            #expect(server.counters.requests("/gone.jpg") == 1)
        }
    }

    @Test("a visible demand joining a queued prefetch upgrades the shared transfer")
    func coalescedUpgrade() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine(
            { $0.maxConnections = 1; $0.maxConnectionsPerHost = 1 }, options: { $0.visibleReserve = 0 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/block", body: photo, faults: [.stall(afterBytes: 10)])
            server.serve("/a", body: photo)
            server.serve("/b", body: photo)
            let coalescer = TransferCoalescer<String>(engine: engine)
            let blocker = engine.start(TransferRequest(url: server.url("/block")))
            try await withTimeout(seconds: 30) { try await server.waitUntil { $0.requests("/block") == 1 } }
            let a = engine.start(TransferRequest(url: server.url("/a"), priority: .prefetch))
            let prefetchB = coalescer.join("b", TransferRequest(url: server.url("/b"), priority: .prefetch))
            let visibleB = coalescer.join("b", TransferRequest(url: server.url("/b"), priority: .visible))
            blocker.cancel()
            _ = try await withTimeout(seconds: 30) { try await visibleB.result() }
            _ = try await withTimeout(seconds: 30) { try await prefetchB.result() }
            _ = try await withTimeout(seconds: 30) { try await a.result() }
            #expect(server.counters.arrivals == ["/block", "/b", "/a"])
        }
    }
}
