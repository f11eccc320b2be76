import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Demands share fetches: coalescing, cancellation by the last demand, priority upgrade,
/// dimensions before the body ends.
@Suite("Pipeline: demands share one fetch", .timeLimit(.minutes(3)))
struct PipelineDemandTests {
    @Test("many demands for one image cause one transfer, and all get the same file")
    func coalesces() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/one.jpg", SyntheticImages.jpeg(width: 800, height: 600), faults: [.held])
            let pipeline = f.pipeline
            let loads = (0..<8).map { _ in
                Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256)) }
            }
            try await withTimeout(seconds: 30) { try await f.server.waitUntil { $0.requests("/one.jpg") == 1 } }
            f.server.release("/one.jpg")
            var paths: Set<String> = []
            for load in loads { paths.insert(try await load.value.path) }
            #expect(paths.count == 1)
            #expect(f.server.counters.requests("/one.jpg") == 1)
        }
    }

    @Test("when the last demand is withdrawn the transfer stops, and the server sees the abort")
    func lastDemandCancels() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/gone.jpg", SyntheticImages.jpeg(width: 800, height: 600), faults: [.held])
            let pipeline = f.pipeline
            let a = Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256)) }
            let b = Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256)) }
            try await withTimeout(seconds: 30) { try await f.server.waitUntil { $0.requests("/gone.jpg") == 1 } }
            try await withTimeout(seconds: 30) { try await pipeline.waitForActiveDemands(atLeast: 2) }
            a.cancel()
            #expect(await rpcError { _ = try await a.value }?.kind == .cancelled)
            #expect(f.server.counters.aborted("/gone.jpg") == 0)
            b.cancel()
            #expect(await rpcError { _ = try await b.value }?.kind == .cancelled)
            try await withTimeout(seconds: 30) { try await f.server.waitUntil { $0.aborted("/gone.jpg") == 1 } }
            f.server.release("/gone.jpg")
            #expect(f.pipeline.activeFetches == 0)
            #expect(await f.pipeline.cachedOnly(ThumbnailRequest(image: image, size: 256)) == nil)
        }
    }

    @Test("one withdrawn demand of two leaves the transfer running for the other")
    func survivingDemandGetsResult() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/kept.jpg", SyntheticImages.jpeg(width: 800, height: 600), faults: [.held])
            let pipeline = f.pipeline
            let leaving = Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256)) }
            let staying = Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256, priority: .prefetch)) }
            try await withTimeout(seconds: 30) { try await f.server.waitUntil { $0.requests("/kept.jpg") == 1 } }
            // Both demands on the fetch before one leaves (each looks in the caches first).
            try await withTimeout(seconds: 30) { try await pipeline.waitForActiveDemands(atLeast: 2) }
            leaving.cancel()
            _ = await rpcError { _ = try await leaving.value }
            f.server.release("/kept.jpg")
            #expect(try await staying.value.width == 256)
            #expect(f.server.counters.aborted("/kept.jpg") == 0)
        }
    }

    @Test("a queued prefetch joined by a visible demand jumps ahead of other prefetches")
    func priorityUpgrade() async throws {
        try await PipelineFixture.with(network: { $0.maxConnections = 1; $0.maxConnectionsPerHost = 1 },
                                       options: { $0.visibleReserve = 0 }) { f in
            let blocker = f.serve("/blocker.jpg", SyntheticImages.jpeg(width: 300, height: 200), faults: [.held])
            let first = f.serve("/first.jpg", SyntheticImages.jpeg(width: 300, height: 200, seed: 2))
            let second = f.serve("/second.jpg", SyntheticImages.jpeg(width: 300, height: 200, seed: 3))
            let pipeline = f.pipeline
            let block = Task { try await pipeline.load(ThumbnailRequest(image: blocker, size: 256)) }
            try await withTimeout(seconds: 30) { try await f.server.waitUntil { $0.requests("/blocker.jpg") == 1 } }
            let a = Task { try await pipeline.load(ThumbnailRequest(image: first, size: 256, priority: .prefetch)) }
            let b = Task { try await pipeline.load(ThumbnailRequest(image: second, size: 256, priority: .prefetch)) }
            try await withTimeout(seconds: 30) { try await f.engine.observedStats.wait { $0.queued >= 2 } }
            let visible = Task { try await pipeline.load(ThumbnailRequest(image: second, size: 256, priority: .visible)) }
            // Four demands registered means the visible one has joined (and raised its fetch).
            try await withTimeout(seconds: 30) { try await f.pipeline.waitForActiveDemands(atLeast: 4) }
            f.server.release("/blocker.jpg")
            _ = try await (block.value, a.value, b.value, visible.value)
            let order = f.server.counters.arrivals.filter { $0 != "/blocker.jpg" }
            #expect(order == ["/second.jpg", "/first.jpg"])
        }
    }

    @Test("dimensions arrive and are recorded before the body is complete")
    func dimensionsBeforeTheEnd() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 1200, height: 900)
            let image = f.serve("/slow.jpg", body, faults: [.stall(afterBytes: 4096)])
            let log = ThumbnailEventLog()
            let pipeline = f.pipeline
            let load = Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256), events: log.handler) }
            let arrived = try await withTimeout(seconds: 30) {
                await log.waitFor { $0 == .dimensions(width: 1200, height: 900) }
            }
            #expect(arrived)
            #expect(f.dimensions.decoded(url: f.server.url("/slow.jpg")) == .init(width: 1200, height: 900))
            #expect(f.server.counters.completed("/slow.jpg") == 0)
            load.cancel()
            #expect(await rpcError { _ = try await load.value }?.kind == .cancelled)
        }
    }

    @Test("a cache hit answers with no events, and the fetch before it told its demand the dimensions and placeholder")
    func noEventsOnHits() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/hit.jpg", SyntheticImages.jpeg(width: 1000, height: 500))
            let fetched = ThumbnailEventLog()
            _ = try await f.pipeline.load(ThumbnailRequest(image: image, size: 200), events: fetched.handler)
            #expect(fetched.all.contains(.dimensions(width: 1000, height: 500)))
            let log = ThumbnailEventLog()
            let hit = try await f.pipeline.load(ThumbnailRequest(image: image, size: 200), events: log.handler)
            #expect(hit.source == .memory)
            #expect(log.all.isEmpty, "docs/protocol.md: a cache hit answers at once, without notifications")
        }
    }
}
