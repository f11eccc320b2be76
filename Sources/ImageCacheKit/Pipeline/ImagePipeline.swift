import CoreMetrics
import Foundation
import ImageCacheConfig
import ImageCacheProtocol
import Logging
import Synchronization

/// The thumbnail pipeline: memory cache → disk cache → one fetch per cache key, which asks the
/// fleet's shared tier (when `[shared]` names servers) before the network.
///
/// A request walks it as a `ThumbnailJourney` (`journey(to:size:…)`, or `load` for an image
/// already resolved), which takes each step once. Every request that reaches the fetch is a
/// *demand*. Demands for the same image at the same width, from any
/// session, slot or prefetch, share one `ThumbnailFetch`: its transfer runs at the highest of
/// their priorities and is cancelled when the last of them is withdrawn. That one mechanism
/// gives coalescing across sessions, the priority upgrade of a prefetched image that becomes
/// visible, and the cancellation of a recycled slot's bytes (docs/protocol.md, "thumbnail.show").
///
/// A fetched body is probed for its header as it arrives (dimensions out early and recorded
/// for `layout`), then validated by decoding, scaled when twice as wide as asked or more,
/// turned upright, written to the disk cache (temp file, rename) and the memory cache, and handed
/// to every waiting demand. Decoding and disk writes run under the `DecodeBudget` (admitted by
/// the decode's cost, computed from the body before it starts) on a dispatch queue, never on
/// the cooperative pool, so memory for decodes is bounded by the budget and the server's
/// tasks never wait behind a decode.
///
/// With a shared tier (`ImagePipeline+SharedTier.swift`), a fetch first reads the tier and
/// claims the image for this host when nobody has it; a verified value is stored locally
/// and answered (`source: "shared"`), a host told that another is fetching waits for it
/// (bounded), and a body fetched from the network goes to the tier in the background.
///
/// The pipeline knows nothing of sockets: the daemon's slots, prefetches and the benchmarks
/// drive it the same way.
public final class ImagePipeline: Sendable {
    /// What the pipeline reads from the running configuration at each fetch (so a SIGHUP
    /// applies to the next one).
    public struct Settings: Sendable, Equatable {
        /// JPEG quality of scaled thumbnails (`thumbnail_quality`).
        public var quality: Int
        /// Pixels an image may declare (`max_image_pixels`).
        package var maxPixels: Int
        /// Whose thumbnails go through the shared tier (`share_images`); empty when `[shared]`
        /// names no server.
        package var shareImages: Set<String>
        /// What to ask Unsplash's imgix for (`[providers.unsplash] image_format`).
        package var unsplashFormat: ProviderImageFormat = .auto
        /// How long a host waits for another's claim before fetching itself (`claim_wait`).
        package var claimWait: Duration = .seconds(10)

        /// Settings from a configuration's `[cache]`, `[network]`, `[shared]` and
        /// `[providers.unsplash]` sections.
        public init(_ configuration: CacheConfiguration) {
            quality = configuration.cache.thumbnailQuality
            maxPixels = configuration.network.maxImagePixels
            shareImages = configuration.shared.isEnabled ? Set(configuration.shared.shareImages) : []
            unsplashFormat = configuration.unsplash.imageFormat
            claimWait = configuration.shared.claimWait
        }
    }

    let cache: ImageCache
    private let transfers: TransferEngine
    let registry: PhotoRegistry
    let dimensions: ImageDimensionsStore
    private let decodes: DecodeBudget
    private let settings: @Sendable () -> Settings
    let logger: Logger
    /// The fleet's shared tier; nil: none (a daemon without `[shared]` servers may still pass
    /// one, which then answers `.unavailable`).
    let shared: (any SharedStore)?
    /// One outcome per thumbnail request (memory, disk, shared, network, coalesced): what
    /// `stats` and the metrics endpoint report as hits and misses.
    package let lookups = ThumbnailLookups()
    /// What the shared tier did for this host's thumbnails (`stats.shared`).
    package let tierActivity = SharedTierActivity()
    /// `imagecached_decode_duration_seconds`: the time to decode, scale and encode a fetched body
    /// (not the wait for the decode budget), by outcome (`ok` or the error kind).
    private let metrics: any MetricsFactory
    private let fetches = LockedState<[FetchKey: ThumbnailFetch]>([:])
    /// Bumped whenever a demand joins or leaves a fetch, or a fetch ends: the event a watcher
    /// waits on (`demandChanges.wait { _ in pipeline.activeDemands >= n }`) instead of polling
    /// `activeDemands`, as the tests do to know a second party has joined a fetch.
    package let demandChanges = Observed(0)
    private let nextDemand = Atomic<UInt64>(0)
    /// Decodes, file writes and the shared tier's task: work that may block, off the pool.
    let work = WorkQueue(label: "imagecached.pipeline")

    /// - Parameters:
    ///   - settings: read at each fetch (the daemon passes its configuration store's current).
    ///   - metrics: where the decode timer goes: the daemon passes its own registry's factory
    ///     (one per daemon, so tests running many daemons in one process never share figures);
    ///     by default the process-wide `MetricsSystem.factory` (a no-op unless bootstrapped).
    public init(cache: ImageCache, transfers: TransferEngine, registry: PhotoRegistry,
                dimensions: ImageDimensionsStore, decodes: DecodeBudget,
                settings: @escaping @Sendable () -> Settings,
                logger: Logger = Logger(label: "imagecached.pipeline"),
                metrics: any MetricsFactory = MetricsSystem.factory,
                shared: (any SharedStore)? = nil) {
        self.metrics = metrics
        self.shared = shared
        self.cache = cache
        self.transfers = transfers
        self.registry = registry
        self.dimensions = dimensions
        self.decodes = decodes
        self.settings = settings
        self.logger = logger
    }

    // MARK: Resolving

    /// The image a contract reference names: a photo id resolves through the registry (the
    /// daemon remembers every photo it returned); a URL is taken as it is and checked by the
    /// URL policy when fetched.
    /// - Throws: `not_found` for a photo id the daemon never returned.
    public func image(for reference: ImageReference) async throws(PipelineError) -> ThumbnailRequest.Image {
        switch reference {
        case .url(let url):
            return .url(url)
        case .photo(let id):
            guard let photo = await registry.photo(id: id) else {
                throw PipelineError.unknownPhoto(id: id)
            }
            return .photo(photo)
        }
    }

    // MARK: Looking up

    /// The plan of `request`: which URL, and which keys, under the running configuration.
    func plan(for request: ThumbnailRequest) -> FetchPlan {
        FetchPlan(request, format: settings().unsplashFormat)
    }

    /// Counts a delivered hit as its request's outcome (a nil is no outcome yet: the caller
    /// goes on to the next step, which counts it).
    func counted(_ delivery: ThumbnailDelivery?) -> ThumbnailDelivery? {
        switch delivery?.source {
        case .memory: lookups.record(.memory)
        case .disk: lookups.record(.disk)
        case .network: lookups.record(.network)
        case .shared: lookups.record(.shared)
        case nil: break
        }
        return delivery
    }

    /// The memory tier's answer for `plan`, with no I/O.
    func memoryLookup(_ plan: FetchPlan, wantsBytes: Bool) -> ThumbnailDelivery? {
        firstHit(plan, wantsBytes: wantsBytes) { key, _ in cache.memoryHit(key) }
    }

    /// The disk tier's answer for `plan`, read on `BlockingIO`'s read lane: a cold read held
    /// one of the cooperative pool's two threads for as long as the disk took, and every
    /// handler of the daemon with it. (A journey asks the indexes first, `ThumbnailJourney`.)
    func diskLookup(_ plan: FetchPlan, wantsBytes: Bool) async -> ThumbnailDelivery? {
        await BlockingIO.read { [self] in
            firstHit(plan, wantsBytes: wantsBytes) { key, isNote in
                cache.get(key, wantBytes: isNote || wantsBytes, wantPath: !isNote)
            }
        }
    }

    /// The one order of a plan's keys in a tier (`read`): its entry keys (the exact size,
    /// then the width the provider said its image has), then the width the note remembers for
    /// the URL (`isNote`: the read is of that note, whose bytes are wanted and whose path is not).
    private func firstHit(_ plan: FetchPlan, wantsBytes: Bool,
                          read: (CacheKey, _ isNote: Bool) -> CacheHit?) -> ThumbnailDelivery? {
        for key in plan.entryKeys {
            if let hit = deliver(read(key, false), wantsBytes: wantsBytes) { return hit }
        }
        guard let note = read(plan.widthNoteKey, true)?.bytes.flatMap({ String(data: $0, encoding: .utf8) }),
              let width = Int(note), width != plan.size else { return nil }
        return deliver(read(CacheKey.thumbnail(url: plan.url, width: width), false), wantsBytes: wantsBytes)
    }

    private func deliver(_ hit: CacheHit?, wantsBytes: Bool) -> ThumbnailDelivery? {
        guard let hit, let path = hit.path, let width = hit.info.width, let height = hit.info.height else { return nil }
        return ThumbnailDelivery(path: path, width: width, height: height, bytes: hit.byteCount,
                                 mime: hit.info.contentType, source: hit.source == .memory ? .memory : .disk,
                                 data: wantsBytes ? hit.bytes : nil, memoryEntry: wantsBytes ? hit.memoryEntry : nil)
    }

    // MARK: Loading

    /// Memory → disk → the shared fetch for this image and width: a whole journey
    /// (`ThumbnailJourney.deliver`) for an image already resolved.
    /// - Throws: an engine error of the contract's kinds (see `ThumbnailJourney.deliver`).
    public func load(_ request: ThumbnailRequest,
                     events: (@Sendable (ThumbnailEvent) -> Void)? = nil) async throws -> ThumbnailDelivery {
        var journey = journey(request)
        return try await journey.deliver(events: events)
    }

    /// One demand on the fetch for its plan's image and width, joined and not yet waited
    /// for: what a journey holds between joining (possibly on an event loop) and waiting (in
    /// its task, `wait(for:)`, which withdraws it whatever happens).
    struct Demand: Sendable {
        let fetch: ThumbnailFetch
        let id: UInt64
        let plan: FetchPlan
        let events: (@Sendable (ThumbnailEvent) -> Void)?
    }

    /// Joins the running fetch for the plan or starts one, as one demand. Never waits or
    /// blocks: an event loop may call it.
    func join(_ plan: FetchPlan, priority: TransferPriority, events: (@Sendable (ThumbnailEvent) -> Void)?) -> Demand {
        let id = nextDemand.add(1, ordering: .relaxed).newValue
        return Demand(fetch: join(plan, demand: id, priority: priority, events: events), id: id, plan: plan, events: events)
    }

    /// Waits for a joined demand's fetch: the last step of a journey. The demand is withdrawn
    /// on every way out; cancelling the calling task withdraws it at once.
    func wait(for demand: Demand, wantsBytes: Bool) async throws -> ThumbnailDelivery {
        let (fetch, id, plan, events) = (demand.fetch, demand.id, demand.plan, demand.events)
        let stored: ThumbnailFetch.Stored
        do {
            stored = try await withTaskCancellationHandler {
                try await fetch.wait()
            } onCancel: {
                withdraw(id, from: fetch)
            }
        } catch where !(error is CancellationError) {
            withdraw(id, from: fetch)
            throw error
        } catch {
            withdraw(id, from: fetch)
            throw Self.cancelled
        }
        withdraw(id, from: fetch)
        if stored.source == .shared, let events {
            // No header was read: the size the value recorded reaches each demand here, just
            // before its answer, so the two leave together (one wake-up of the client's loop).
            events(plan.dimensionsEvent(copyWidth: stored.originalWidth, copyHeight: stored.originalHeight,
                                        placeholder: plan.placeholder(computed: nil)))
        }
        return ThumbnailDelivery(path: stored.path, width: stored.width, height: stored.height, bytes: stored.bytes.count,
                                 mime: stored.mime, source: stored.source, data: wantsBytes ? stored.bytes : nil)
    }

    /// The placeholder remembered for the plan's photo, else for its image URL (may read the
    /// database).
    private static func rememberedPlaceholder(_ plan: FetchPlan, in dimensions: ImageDimensionsStore) -> ImagePlaceholder? {
        if let photo = plan.photoID, let placeholder = dimensions.placeholder(photo: photo) { return placeholder }
        return dimensions.placeholder(url: plan.cleanURL)
    }

    private static let cancelled = Cancellation.request

    /// Joins the running fetch for the plan's key, or starts one.
    private func join(_ plan: FetchPlan, demand id: UInt64, priority: TransferPriority,
                      events: (@Sendable (ThumbnailEvent) -> Void)?) -> ThumbnailFetch {
        while true {
            let (fetch, isNew) = fetches.withLock { fetches -> (ThumbnailFetch, Bool) in
                if let running = fetches[plan.fetchKey], !running.isAbandoned { return (running, false) }
                let fresh = ThumbnailFetch(plan: plan, priority: priority)
                fetches[plan.fetchKey] = fresh
                return (fresh, true)
            }
            guard fetch.add(id, priority: priority, events: events) else { continue }
            // The fetch's starter is counted once its source is known (`start`).
            if !isNew { lookups.record(.coalesced) }
            if isNew { start(fetch) }
            demandChanges.update { $0 &+= 1 }
            return fetch
        }
    }

    private func withdraw(_ id: UInt64, from fetch: ThumbnailFetch) {
        if fetch.remove(id) { forget(fetch) } else { demandChanges.update { $0 &+= 1 } }
    }

    func forget(_ fetch: ThumbnailFetch) {
        fetches.withLock { fetches in
            if fetches[fetch.key] === fetch { fetches[fetch.key] = nil }
        }
        demandChanges.update { $0 &+= 1 }
    }

    /// Starts the fetch: through the shared tier when there is one and it takes this image's
    /// source (`share_images`), else straight to the network.
    private func start(_ fetch: ThumbnailFetch) {
        let current = settings()
        if let shared, current.shareImages.contains(fetch.plan.shareSource) {
            // Run at once up to the tier's round trip (no wait for a pool thread to pick the
            // task up), then on the work queue, where a hit's file is written.
            Task.immediate(executorPreference: work) { await startThroughTier(fetch, tier: shared, settings: current) }
        } else {
            lookups.record(.network)
            startTransfer(fetch, settings: current, tier: nil)
        }
    }

    /// Starts the transfer now (so queue order follows request order), then processes the body
    /// in a task; a processed thumbnail goes to the shared tier under `tier` in the background,
    /// and a failed fetch releases the tier's claim it held, so no other host waits for it.
    func startTransfer(_ fetch: ThumbnailFetch, settings current: Settings, tier: TierWrite?) {
        let dimensions = self.dimensions
        let priority = fetch.priority
        var request = TransferRequest(url: fetch.plan.url, priority: priority, deliverChunks: true)
        request.awaitsRelease = true  // `process` releases it, whatever the outcome
        let handle = transfers.start(request) { event in
            fetch.handle(event, dimensions: dimensions, maxPixels: current.maxPixels)
        }
        fetch.attach(handle, startedAt: priority)
        let started = ContinuousClock.now
        Task {
            let outcome: Result<ThumbnailFetch.Stored, any Error>
            var received = 0
            do {
                let result = try await handle.wait()
                received = result.body.count
                outcome = .success(try await process(result, fetch: fetch, settings: current))
            } catch where !(error is CancellationError) {
                outcome = .failure(fetch.earlyFailure ?? error)
            } catch {
                outcome = .failure(fetch.earlyFailure ?? Self.cancelled)
            }
            // Every fetch from the network at info (memory and disk hits log nothing above
            // debug); a failed one with its kind (the request's own line says it too).
            let milliseconds = (ContinuousClock.now - started).wholeMilliseconds
            switch outcome {
            case .success:
                logger.info("fetched from the network", metadata: [
                    "url": "\(URLRedaction.redact(fetch.plan.url))", "bytes": "\(received)", "duration_ms": "\(milliseconds)",
                ])
            case .failure(let error) where !isCancellation(error):
                logger.info("fetch from the network failed", metadata: [
                    "url": "\(URLRedaction.redact(fetch.plan.url))", "kind": "\(engineKind(of: error).rawValue)", "error": "\(error)",
                    "duration_ms": "\(milliseconds)",
                ])
            case .failure:
                break
            }
            fetch.finish(outcome)
            forget(fetch)
            if let tier { write(outcome, to: tier) }
        }
    }

    /// Validates, scales and stores a fetched body, under the decode limit, off the pool;
    /// the body is handed back to the engine afterwards, whatever the outcome (a spill file to
    /// be reused, and room for the next prefetch).
    private func process(_ result: TransferResult, fetch: ThumbnailFetch,
                         settings: Settings) async throws -> ThumbnailFetch.Stored {
        let outcome: Result<ThumbnailFetch.Stored, any Error>
        do {
            outcome = .success(try await processBody(result, fetch: fetch, settings: settings))
        } catch {
            outcome = .failure(error)
        }
        let transfers = self.transfers
        if case .file = result.body {
            // Emptying the file waits for the file system, so not on the cooperative pool; and a
            // client waits for it, so on the lane for reads, never behind bulk decodes and fsyncs.
            await BlockingIO.read { transfers.release(result) }
        } else {
            transfers.release(result)
        }
        return try outcome.get()
    }

    private func processBody(_ result: TransferResult, fetch: ThumbnailFetch,
                             settings: Settings) async throws -> ThumbnailFetch.Stored {
        let plan = fetch.plan
        // A body nobody wants any more is not walked: it is released at once, and with it the
        // room it held in the look-ahead.
        guard !fetch.isAbandoned else { throw Self.cancelled }
        // The header, metadata and markers read for the cost are handed to the decode, not read again.
        let processing = try await decodeCost(of: result.body, size: plan.size, maxPixels: settings.maxPixels)
        let permit = try await decodes.acquire(processing.cost)
        defer { decodes.release(permit) }
        guard !fetch.isAbandoned else { throw Self.cancelled }
        let cache = self.cache
        let dimensions = self.dimensions
        let logger = self.logger
        let metrics = self.metrics
        return try await withCheckedThrowingContinuation { continuation in
            work.async {
                let started = ContinuousClock.now
                let outcome = Result { () throws -> ThumbnailFetch.Stored in
                    // The placeholder from the pixels decoded anyway, unless the provider sent it or
                    // an earlier decode of the image did (the first one is kept; a lookup, not a scan).
                    let remembered = plan.hasOwnPlaceholder ? nil : Self.rememberedPlaceholder(plan, in: dimensions)
                    let output = try ThumbnailProcessing.process(result.body, plan: processing, quality: settings.quality,
                                                                 placeholder: !plan.hasOwnPlaceholder && remembered == nil)
                    return try Self.storeLocally(output.bytes, width: output.width, height: output.height, mime: output.mime,
                                                 original: (output.original.width, output.original.height),
                                                 placeholder: output.placeholder, source: .network,
                                                 fetch: fetch, cache: cache, dimensions: dimensions, logger: logger)
                }
                let kind: String
                switch outcome {
                case .success: kind = "ok"
                case .failure(let error): kind = engineKind(of: error).rawValue
                }
                CoreMetrics.Timer(label: "imagecached_decode_duration_seconds", dimensions: [("outcome", kind)], factory: metrics)
                    .recordInterval(since: started)
                continuation.resume(with: outcome)
            }
        }
    }

    /// What processing `body` will cost, and the plan its processing then follows (the header,
    /// census and survey read here), on the work queue (it walks the whole body): a body
    /// spooled to a file is mapped, not read, so bodies waiting for the budget hold no memory.
    /// - Throws: what the cost computation refuses before any decode (`too_large` over the
    ///   pixel limit, `decode_failed` for a scan bomb or an undecodable header), and a
    ///   `StorageError` when a spooled body cannot be opened or mapped.
    private func decodeCost(of body: TransferBody, size: Int, maxPixels: Int) async throws -> ThumbnailProcessing.Plan {
        try await withCheckedThrowingContinuation { continuation in
            work.async {
                continuation.resume(with: Result { () throws -> ThumbnailProcessing.Plan in
                    try body.withBytes { (raw) throws(ImagingError) -> ThumbnailProcessing.Plan in
                        try ThumbnailProcessing.cost(of: raw, size: size, maxPixels: maxPixels)
                    }
                })
            }
        }
    }

    // MARK: Eviction

    /// Removes every cached thumbnail of a photo (all its variants, every width) or of a URL.
    /// Paths already handed out stay readable for their grace.
    /// - Throws: `not_found` for a photo id the daemon never returned.
    package func evict(_ reference: ImageReference) async throws(PipelineError) {
        let image = try await image(for: reference)
        let cache = cache
        // Removing files: on `BlockingIO`'s threads, never the cooperative pool's.
        await BlockingIO.run {
            switch image {
            case .url(let url):
                cache.evict(url: url)
            case .photo(let photo):
                for variant in photo.variants { cache.evict(url: variant.url) }
                if let full = photo.photo.fullURL { cache.evict(url: full) }
                cache.evict(url: photo.photo.thumbURL)
                if let resizable = photo.resizableURL {
                    let base = resizable.split(separator: "?", maxSplits: 1).first.map(String.init) ?? resizable
                    cache.evict(url: base, asPrefix: true)
                }
            }
        }
    }

    /// Fetches running now (each shared by one or more demands), for stats and tests.
    package var activeFetches: Int { fetches.withLock { $0.count } }

    /// Demands waiting on running fetches now (a coalesced fetch counts each of its demands).
    package var activeDemands: Int {
        fetches.withLock { Array($0.values) }.reduce(0) { $0 + $1.demandCount }
    }
}
