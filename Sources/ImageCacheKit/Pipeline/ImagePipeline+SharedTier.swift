import Foundation
import ImageCacheProtocol
import Logging
import Synchronization

/// What the shared tier did for this host's thumbnails, for `stats.shared` and the metrics:
/// the pipeline's view (the client's per-node figures are the server's to add).
package final class SharedTierActivity: Sendable {
    /// Values read from the tier that failed verification (checksum, identity, header) and
    /// were deleted and fetched again.
    package let rejected = Atomic<Int>(0)
    /// Fetches that waited for another host's claim.
    public let waits = Atomic<Int>(0)
    /// Of those, the waits that ended without the value (the claim holder failed, was slow or
    /// died): this host then fetched itself.
    package let waitsExpired = Atomic<Int>(0)
    /// Thumbnails written to the tier (stored by the server) and not (too large, node down).
    public let writes = Atomic<Int>(0)
    package let writesFailed = Atomic<Int>(0)
    /// Bumped after every background write attempt ends: what a test awaits instead of sleeping.
    package let writeAttempts = Observed(0)

    public init() {}
}

/// Where a fetched thumbnail goes in the tier, and whether this host holds the tier's claim
/// on it (then a failed fetch deletes the placeholder, so no other host waits for it).
struct TierWrite: Sendable {
    var store: any SharedStore
    var key: String
    var claimed: Bool
}

extension ImagePipeline {
    /// How long a claim holds when its holder never stores (it died): then another host may
    /// claim. Longer than any thumbnail fetch usually takes, shorter than a user's patience.
    static let claimLifetime: Duration = .seconds(20)
    /// How often a waiting host reads the key again (memcached has no notification): first
    /// after 10 ms, then twice as long each time up to 160 ms, so a prefetch of hundreds of
    /// images another host is fetching does not poll memcached hundreds of times a second
    /// each (measured: a flat 20 ms made a loaded host's reads time out), while the usual
    /// wait, a fetch of tens of milliseconds, is still noticed within a few.
    static let claimPollFirst: Duration = .milliseconds(10)
    static let claimPollLongest: Duration = .milliseconds(160)
    /// How long a thumbnail lives in the tier (memcached's LRU usually evicts first).
    static let sharedLifetime: Duration = .seconds(7 * 24 * 3600)

    /// Reads the tier for the fetch's image, claiming it for this host on a miss, and acts on
    /// the answer: a verified value is stored locally and delivered; a claim won, a miss or an
    /// unavailable tier start the network transfer (whose result is written back); a claim
    /// held elsewhere is waited on (bounded, visible as zero-byte progress), polling the key
    /// with a claim of its own, so a holder that gives up or dies hands the claim over.
    func startThroughTier(_ fetch: ThumbnailFetch, tier store: any SharedStore, settings: Settings) async {
        let plan = fetch.plan
        let key = SharedThumbnailValue.key(url: plan.cleanURL, size: plan.size)
        let deadline = ContinuousClock.now + settings.claimWait
        var waiting = false
        var rejectedOnce = false
        var poll = Self.claimPollFirst
        while true {
            guard !fetch.isAbandoned else {
                fetch.finish(.failure(Cancellation.request))
                forget(fetch)
                return
            }
            let found = await store.lookup(key, claim: rejectedOnce ? nil : Self.claimLifetime)
            switch found {
            case .hit(let bytes):
                if let (value, checksum) = SharedThumbnailValue.decodeVerified(bytes, key: key) {
                    return deliver(value, checksum: checksum, fetch: fetch, settings: settings)
                }
                tierActivity.rejected.add(1, ordering: .relaxed)
                logger.warning("a thumbnail in the shared tier failed verification; deleted, fetching it again",
                               metadata: ["url": "\(URLRedaction.redact(plan.url))", "bytes": "\(bytes.count)"])
                await store.remove(key)
                // Once: claim the key again, so the fleet still fetches it once. A second bad
                // value (a writer keeps planting it) is not waited on: fetch, and overwrite it.
                if rejectedOnce { return network(fetch, settings: settings, tier: TierWrite(store: store, key: key, claimed: false)) }
                rejectedOnce = true
            case .claimed:
                return network(fetch, settings: settings, tier: TierWrite(store: store, key: key, claimed: true))
            case .miss:
                return network(fetch, settings: settings, tier: TierWrite(store: store, key: key, claimed: false))
            case .unavailable:
                // The node is down or ejected: as without a tier (a write would fail too).
                return network(fetch, settings: settings, tier: nil)
            case .fetchingElsewhere:
                if !waiting {
                    waiting = true
                    tierActivity.waits.add(1, ordering: .relaxed)
                    fetch.announceWaiting()
                }
                guard ContinuousClock.now < deadline else {
                    tierActivity.waitsExpired.add(1, ordering: .relaxed)
                    logger.info("waited for another host's fetch in vain; fetching here",
                                metadata: ["url": "\(URLRedaction.redact(plan.url))"])
                    return network(fetch, settings: settings, tier: TierWrite(store: store, key: key, claimed: false))
                }
                try? await Task.sleep(for: poll)
                poll = min(poll * 2, Self.claimPollLongest)
            }
        }
    }

    private func network(_ fetch: ThumbnailFetch, settings: Settings, tier: TierWrite?) {
        lookups.record(.network)
        startTransfer(fetch, settings: settings, tier: tier)
    }

    /// Answers the fetch with a verified shared value, on the work queue (the file write
    /// blocks; the tier's task prefers that queue, so it is there already after the tier's
    /// answer): the file is written, the demands get its path (and each its
    /// `thumbnail.dimensions` just before, see `fetch`) at once, and the entry's
    /// bookkeeping (index row, memory copy, width note) follows on the cache's publisher,
    /// after the answer. A disk that refuses the file sends the fetch to the network path,
    /// which meets the same disk and reports it (`storage_unavailable`).
    private func deliver(_ value: SharedThumbnailValue, checksum: [UInt8], fetch: ThumbnailFetch, settings: Settings) {
        guard work.isCurrent else {
            return work.async { [self] in deliver(value, checksum: checksum, fetch: fetch, settings: settings) }
        }
        let plan = fetch.plan
        let stored: ThumbnailFetch.Stored, placement: ImageCache.Placement
        do {
            (stored, placement) = try Self.placeShared(value, checksum: checksum, plan: plan, cache: cache,
                                                       dimensions: dimensions, logger: logger)
        } catch {
            return network(fetch, settings: settings, tier: nil)
        }
        lookups.record(.shared)
        logger.debug("thumbnail from the shared tier", metadata: ["bytes": "\(value.image.count)"])
        fetch.finish(.success(stored))
        forget(fetch)
        cache.publishLater(placement, notes: Self.widthNote(value.width, plan: plan).map { [$0] } ?? [])
    }

    /// After a network fetch that went through the tier: the thumbnail to the tier in the
    /// background, or, when the fetch failed while this host held the claim, the claim
    /// released.
    func write(_ outcome: Result<ThumbnailFetch.Stored, any Error>, to tier: TierWrite) {
        let activity = tierActivity
        let logger = self.logger
        switch outcome {
        case .success(let stored):
            guard let format = ImageFormat.allCases.first(where: { $0.mimeType == stored.mime }) else { return }
            let value = SharedThumbnailValue(format: format, width: stored.width, height: stored.height,
                                             originalWidth: stored.originalWidth, originalHeight: stored.originalHeight,
                                             image: [UInt8](stored.bytes))
            Task {
                let written = await tier.store.store(tier.key, value.encoded(key: tier.key), ttl: Self.sharedLifetime)
                if written {
                    activity.writes.add(1, ordering: .relaxed)
                } else {
                    activity.writesFailed.add(1, ordering: .relaxed)
                }
                if !written {
                    logger.debug("a thumbnail was not written to the shared tier", metadata: ["bytes": "\(stored.bytes.count)"])
                    if tier.claimed { await tier.store.remove(tier.key) }
                }
                activity.writeAttempts.update { $0 &+= 1 }
            }
        case .failure:
            guard tier.claimed else { return }
            Task {
                await tier.store.remove(tier.key)
                activity.writeAttempts.update { $0 &+= 1 }
            }
        }
    }
}
