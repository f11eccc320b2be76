import ImageCacheProtocol

/// One thumbnail request's way through the engine, walked once.
///
/// The photo is resolved once; the plan's keys (`FetchPlan`) are looked up once in memory, then
/// once through the disk tier; then the caller's hook runs (the daemon's fling hold), and the request joins
/// the one fetch for its image and width or starts it, which asks the fleet's shared tier
/// before the network, decodes, stores and records the original's size once for every demand.
///
/// The steps are separate so that a caller can stop between them without any being repeated:
/// the daemon's event loop answers a memory hit with no task (`memoryHit()`) and joins the
/// fetch of a miss it can tell from the indexes before the task starts (`joinNow`), a prefetch learns
/// whether the image is cached before it queues (`cached()`), and `deliver` goes on from where
/// the walk stopped. A journey belongs to one task at a time (it is a value: each step mutates
/// it).
///
/// A hit answers with no events, as docs/protocol.md says of a cache hit; events (progress,
/// the dimensions) come from a fetch.
package struct ThumbnailJourney: Sendable {
    /// What the caller waits for between a miss and the fetch: it returns whether it waited at
    /// all, so that the journey looks at the memory tier again after a wait (a fetch that ended
    /// meanwhile filled it); throwing ends the journey (a recycled slot's hold).
    package typealias BeforeFetch = @Sendable () async throws -> Bool

    /// The tiers looked at so far, in their order.
    private enum Looked: Int, Comparable {
        case nothing, memory, disk
        static func < (a: Looked, b: Looked) -> Bool { a.rawValue < b.rawValue }
    }

    private let pipeline: ImagePipeline
    private let reference: ImageReference?
    private let size: Int
    private let priority: TransferPriority
    private let wantsBytes: Bool
    /// Set once the image is resolved (a photo id through the registry).
    private var plan: FetchPlan?
    private var looked = Looked.nothing
    /// The demand `joinNow` joined, which `deliver` waits for.
    private var joined: ImagePipeline.Demand?
    /// What the cache's indexes said of the plan's keys, once asked (`indexesHoldNone`).
    private var heldNone: Bool?

    /// A journey for a contract reference, resolved on its first step that needs it.
    init(pipeline: ImagePipeline, reference: ImageReference, size: Int, priority: TransferPriority, wantsBytes: Bool) {
        self.pipeline = pipeline
        self.reference = reference
        self.size = size
        self.priority = priority
        self.wantsBytes = wantsBytes
    }

    /// A journey for an image already resolved.
    init(pipeline: ImagePipeline, request: ThumbnailRequest) {
        self.pipeline = pipeline
        reference = nil
        size = request.size
        priority = request.priority
        wantsBytes = request.wantsBytes
        plan = pipeline.plan(for: request)
    }

    /// The memory tier only, with no I/O and no waiting: what may run on an event loop. A
    /// photo id is resolved only when the registry has it in memory; nil whenever the answer
    /// needs more (a later step then goes on from here).
    package mutating func memoryHit() -> ThumbnailDelivery? {
        guard looked < .memory else { return nil }
        if plan == nil, let reference {
            switch reference {
            case .url(let url): plan = pipeline.plan(for: .url(url), self)
            case .photo(let id):
                guard let photo = pipeline.registry.remembered(id: id) else { return nil }
                plan = pipeline.plan(for: .photo(photo), self)
            }
        }
        guard let plan else { return nil }
        looked = .memory
        return pipeline.counted(pipeline.memoryLookup(plan, wantsBytes: wantsBytes))
    }

    /// Joins (or starts) the fetch at once when the miss is known with no I/O and no waiting:
    /// the memory tier was looked at (`memoryHit`, nil) and the disk's index, in memory, holds
    /// none of the plan's keys. The daemon's event loop calls it when a show arrives and no
    /// fling hold applies, so a shared-tier hit's round trip, or a transfer, begins while the
    /// request's task is still being scheduled. The demand is this journey's: the caller must
    /// go on to `deliver`, which waits for it and withdraws it whatever happens (a task
    /// cancelled before it ran withdraws it there, and its fetch stops if nobody else wants
    /// it). Returns false, joining nothing, when the miss is not known so cheaply.
    package mutating func joinNow(events: (@Sendable (ThumbnailEvent) -> Void)?) -> Bool {
        guard looked == .memory, joined == nil, let plan, indexesHoldNone(plan) else { return false }
        looked = .disk
        joined = pipeline.join(plan, priority: priority, events: events)
        return true
    }

    /// Memory, then the cache's own lookup (memory's slower road: a copy whose file must be
    /// checked or written back; then the disk), each unless already walked; never the network.
    /// nil on a miss.
    /// - Throws: `not_found` for a photo id the daemon never returned.
    package mutating func cached() async throws(PipelineError) -> ThumbnailDelivery? {
        let plan = try await resolved()
        if looked < .memory, let hit = memoryHit() { return hit }
        guard looked < .disk else { return nil }
        looked = .disk
        // A thumbnail the cache never held misses with no trip to the read lane and back.
        if indexesHoldNone(plan) { return nil }
        return pipeline.counted(await pipeline.diskLookup(plan, wantsBytes: wantsBytes))
    }

    /// Whether the cache's indexes, in memory, hold none of the plan's keys: a miss known
    /// with no I/O (`ImageCache.holdsNone`, which counts the misses the reads would have).
    /// Asked once per journey: a disk hit pays for the question once, and the misses are
    /// counted once.
    private mutating func indexesHoldNone(_ plan: FetchPlan) -> Bool {
        if let heldNone { return heldNone }
        let none = pipeline.cache.holdsNone(of: plan.indexKeys)
        heldNone = none
        return none
    }

    /// The rest of the walk: the tiers not yet looked at, then `beforeFetch`, then the shared
    /// fetch for this image and width; or, after `joinNow`, the wait for the fetch it joined.
    ///
    /// Cancelling the calling task withdraws this demand at once (throwing `cancelled`); the
    /// fetch goes on while other demands remain, and stops (bytes and all) when none does.
    /// `events` receives progress and the dimensions; it may still be called briefly after
    /// the task is cancelled, so a caller that must never see a late event guards itself.
    /// - Throws: an engine error of the contract's kinds (not_found, forbidden, timeout,
    ///   decode_failed, too_large, upstream_error, rate_limited, network_unavailable, busy,
    ///   cancelled), or what `beforeFetch` throws.
    package mutating func deliver(events: (@Sendable (ThumbnailEvent) -> Void)? = nil,
                                  beforeFetch: BeforeFetch? = nil) async throws -> ThumbnailDelivery {
        if let joined {
            self.joined = nil
            return try await pipeline.wait(for: joined, wantsBytes: wantsBytes)
        }
        if let hit = try await cached() { return hit }
        let plan = try await resolved()
        if let beforeFetch, try await beforeFetch(),
           let hit = pipeline.counted(pipeline.memoryLookup(plan, wantsBytes: wantsBytes)) {
            return hit
        }
        // A demand withdrawn by now never starts a transfer it would cancel at once.
        guard !Task.isCancelled else { throw Cancellation.request }
        return try await pipeline.wait(for: pipeline.join(plan, priority: priority, events: events), wantsBytes: wantsBytes)
    }

    /// The plan, resolving the photo id through the registry the first time.
    private mutating func resolved() async throws(PipelineError) -> FetchPlan {
        if let plan { return plan }
        guard let reference else { preconditionFailure("a journey has a reference or a plan") }
        let planned = pipeline.plan(for: try await pipeline.image(for: reference), self)
        plan = planned
        return planned
    }

    /// The request this journey makes for `image`.
    fileprivate func request(for image: ThumbnailRequest.Image) -> ThumbnailRequest {
        ThumbnailRequest(image: image, size: size, priority: priority, wantsBytes: wantsBytes)
    }
}

extension ImagePipeline {
    /// The one entry of a thumbnail request from the daemon: a journey that walks memory,
    /// disk, the caller's hook and the fetch once each (`ThumbnailJourney`).
    package func journey(to reference: ImageReference, size: Int, priority: TransferPriority = .visible,
                         wantsBytes: Bool = false) -> ThumbnailJourney {
        ThumbnailJourney(pipeline: self, reference: reference, size: size, priority: priority, wantsBytes: wantsBytes)
    }

    /// A journey for an image already resolved (`image(for:)`).
    package func journey(_ request: ThumbnailRequest) -> ThumbnailJourney {
        ThumbnailJourney(pipeline: self, request: request)
    }

    fileprivate func plan(for image: ThumbnailRequest.Image, _ journey: ThumbnailJourney) -> FetchPlan {
        plan(for: journey.request(for: image))
    }
}
