import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ImageCacheSupport
import ProviderSimulator
import Testing
import TestSupport

/// A thumbnail's journey walks each step once: the tiers, the caller's hook, the fetch.
@Suite("Pipeline: a thumbnail's journey", .timeLimit(.minutes(3)))
struct ThumbnailJourneyTests {
    /// A `beforeFetch` hook the test opens: it says when the journey reached it, then waits for
    /// the test's word (whether it "waited").
    final class Gate: Sendable {
        private let reachedStream: AsyncStream<Void>
        private let reachedContinuation: AsyncStream<Void>.Continuation
        private let openStream: AsyncStream<Bool>
        private let openContinuation: AsyncStream<Bool>.Continuation
        private let callCount = LockedState(0)

        init() {
            (reachedStream, reachedContinuation) = AsyncStream.makeStream(of: Void.self)
            (openStream, openContinuation) = AsyncStream.makeStream(of: Bool.self)
        }

        var hook: ThumbnailJourney.BeforeFetch {
            { [self] in
                callCount.withLock { $0 += 1 }
                reachedContinuation.yield()
                for await waited in openStream { return waited }
                throw CancellationError()
            }
        }

        var calls: Int { callCount.withLock { $0 } }

        func reached() async {
            for await _ in reachedStream { return }
        }

        func open(waited: Bool) {
            openContinuation.yield(waited)
        }
    }

    @Test("a hit never reaches the hook")
    func hitSkipsTheHook() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/hit.jpg", SyntheticImages.jpeg(width: 800, height: 600))
            _ = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            let gate = Gate()
            var journey = f.pipeline.journey(ThumbnailRequest(image: image, size: 256))
            let delivery = try await journey.deliver(beforeFetch: gate.hook)
            #expect(delivery.source == .memory)
            #expect(gate.calls == 0)
            #expect(f.server.counters.requests("/hit.jpg") == 1)
        }
    }

    @Test("a fetch that ended while the hook waited is served from memory, not fetched again")
    func fetchEndedDuringTheHold() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/held.jpg", SyntheticImages.jpeg(width: 800, height: 600))
            let pipeline = f.pipeline
            let gate = Gate()
            let held = Task {
                var journey = pipeline.journey(ThumbnailRequest(image: image, size: 256))
                return try await journey.deliver(beforeFetch: gate.hook)
            }
            try await withTimeout(seconds: 30) { await gate.reached() }
            #expect(try await pipeline.load(ThumbnailRequest(image: image, size: 256)).source == .network)
            gate.open(waited: true)
            let delivery = try await withTimeout(seconds: 30) { try await held.value }
            #expect(delivery.source == .memory)
            #expect(f.server.counters.requests("/held.jpg") == 1)
        }
    }

    @Test("a hook that did not wait goes straight on to the fetch")
    func hookThatPassed() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/calm.jpg", SyntheticImages.jpeg(width: 800, height: 600))
            var journey = f.pipeline.journey(ThumbnailRequest(image: image, size: 256))
            let delivery = try await journey.deliver(beforeFetch: { false })
            #expect(delivery.source == .network)
            #expect(f.server.counters.requests("/calm.jpg") == 1)
        }
    }

    @Test("a hook that throws ends the journey before any byte is asked for")
    func hookThatThrows() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/recycled.jpg", SyntheticImages.jpeg(width: 800, height: 600))
            var journey = f.pipeline.journey(ThumbnailRequest(image: image, size: 256))
            do {
                _ = try await journey.deliver(beforeFetch: { throw CancellationError() })
                Issue.record("the journey went on past a hook that threw")
            } catch {
                #expect(error is CancellationError)
            }
            #expect(f.server.counters.requests("/recycled.jpg") == 0)
            #expect(f.pipeline.activeFetches == 0)
        }
    }

    @Test("joinNow starts the fetch of a miss the indexes tell, before any task waits; deliver waits for it and never reaches the hook")
    func joinedAtOnce() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 1200, height: 900)
            let image = f.serve("/early.jpg", body, faults: [.stall(afterBytes: 4096)])
            let log = ThumbnailEventLog()
            var journey = f.pipeline.journey(ThumbnailRequest(image: image, size: 256))
            let beforeMemory = journey.joinNow(events: log.handler)
            #expect(!beforeMemory, "the memory step comes first")
            let hit = journey.memoryHit()
            #expect(hit == nil)
            let joined = journey.joinNow(events: log.handler)
            #expect(joined)
            let twice = journey.joinNow(events: log.handler)
            #expect(!twice, "one demand per journey")
            // Nobody waits yet, and the bytes already flow: the header's dimensions arrive.
            let arrived = try await withTimeout(seconds: 30) { await log.waitFor { $0 == .dimensions(width: 1200, height: 900) } }
            #expect(arrived)
            #expect(f.pipeline.activeFetches == 1)
            // A task cancelled before it waits withdraws the demand: the fetch, wanted by no one, stops.
            let walked = journey
            let waiting = Task {
                var journey = walked
                return try await journey.deliver(beforeFetch: { Issue.record("the hook ran for a joined demand"); return false })
            }
            waiting.cancel()
            #expect(await rpcError { _ = try await waiting.value }?.kind == .cancelled)
            #expect(f.pipeline.activeFetches == 0)
            #expect(f.server.counters.completed("/early.jpg") == 0)
        }
    }

    @Test("joinNow leaves a thumbnail the cache holds to the lookup, and a joined demand delivers the fetched thumbnail once")
    func joinNowOnlyOnMisses() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/joined.jpg", SyntheticImages.jpeg(width: 800, height: 600))
            let gate = Gate()
            var journey = f.pipeline.journey(ThumbnailRequest(image: image, size: 256))
            let missed = journey.memoryHit() == nil
            let joined = journey.joinNow(events: nil)
            #expect(missed && joined)
            let delivery = try await journey.deliver(beforeFetch: gate.hook)
            #expect(delivery.source == .network && delivery.width == 256)
            #expect(gate.calls == 0)
            var again = f.pipeline.journey(ThumbnailRequest(image: image, size: 256))
            let hit = again.memoryHit()
            #expect(hit?.source == .memory)
            let joinedAgain = again.joinNow(events: nil)
            #expect(!joinedAgain, "the cache holds it")
            #expect(f.server.counters.requests("/joined.jpg") == 1)
        }
    }

    @Test("each step is walked once: after both tiers were read, they are not read again")
    func tiersReadOnce() async throws {
        try await PipelineFixture.with { f in
            let url = f.server.url("/once.jpg")
            f.server.serve("/once.jpg", body: SyntheticImages.jpeg(width: 800, height: 600))
            var journey = f.pipeline.journey(to: .url(url), size: 256)
            let early = journey.memoryHit()
            #expect(early == nil)
            // Both tiers hold it now; this journey's memory step is behind it, its cache step
            // (memory's slower road, then the disk) is not.
            _ = try await f.pipeline.load(ThumbnailRequest(image: .url(url), size: 256))
            let again = journey.memoryHit()
            #expect(again == nil, "the memory step was walked already")
            let found = try await journey.cached()
            #expect(found != nil)
            let twice = try await journey.cached()
            #expect(twice == nil, "both tiers were read: nothing is looked at again")
        }
    }

    @Test("a photo id the registry never saw: no memory answer on the event loop, not_found on the next step")
    func unknownPhoto() async throws {
        try await PipelineFixture.with { f in
            var journey = f.pipeline.journey(to: .photo("unsplash:never"), size: 256)
            let early = journey.memoryHit()
            #expect(early == nil)
            var copy = journey
            #expect(await rpcError { _ = try await copy.cached() }?.kind == .notFound)
            copy = journey
            #expect(await rpcError { _ = try await copy.deliver() }?.kind == .notFound)
        }
    }

    @Test("a remembered photo resolves on the event loop, and its memory hit answers there")
    func rememberedPhotoOnTheEventLoop() async throws {
        try await PipelineFixture.with { f in
            f.server.serve("/p.jpg", body: SyntheticImages.jpeg(width: 800, height: 600))
            let photo = Photo(id: "unsplash:p", provider: "unsplash", width: 800, height: 600,
                              thumbURL: f.server.url("/p.jpg"), fullURL: f.server.url("/p.jpg"),
                              author: .init(name: "A", profileURL: nil), likes: nil, description: nil, pageURL: nil)
            await f.registry.remember([ProviderPhoto(photo: photo, variants: [
                ImageVariant(name: "full", url: f.server.url("/p.jpg"), width: 800, height: 600),
            ])])
            _ = try await f.pipeline.load(ThumbnailRequest(image: try await f.pipeline.image(for: .photo("unsplash:p")), size: 256))
            var journey = f.pipeline.journey(to: .photo("unsplash:p"), size: 256)
            let hit = journey.memoryHit()
            #expect(hit?.source == .memory)
        }
    }
}
