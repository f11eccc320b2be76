import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: cancellation", .timeLimit(.minutes(2)))
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
}
