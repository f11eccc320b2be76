import ImageCacheKit
import Logging

/// `prefetch` and `prefetch.cancel` (docs/protocol.md, `prefetch`) on the socket: `prefetch`
/// answers `{queued}` at once and loads each item in the background at prefetch priority
/// (below every visible request), into the caches only; `prefetch.finished` reports each item.
/// `prefetch.cancel` withdraws the session's matching items.
public struct PrefetchMethods: MethodFamily {
    let services: DaemonServices
    /// The sessions' tables, shared with `ThumbnailMethods`: a session's prefetches live beside
    /// its slots and end with them when it closes.
    let sessions: SessionSlots

    /// The family over `services.pipeline`, keeping each session's prefetches in `sessions`.
    init(services: DaemonServices, sessions: SessionSlots) {
        self.services = services
        self.sessions = sessions
    }

    /// Adds the two methods.
    public func register(in router: inout RPCRouter) {
        router.register(Methods.Prefetch.self, .task { [self] params, context in
            try await prefetch(params, session: context.session)
        })
        router.register(Methods.PrefetchCancel.self, options: RouteOptions(countsTowardPendingCap: false), .task {
            [self] params, context in
            let prefetches = sessions.tables(for: context.session).prefetches
            let photos = Set(params.photos ?? [])
            let urls = Set(params.urls ?? [])
            let cancelled = prefetches.cancel { key in
                switch key.reference {
                case .photo(let id): return params.cancelsAll || photos.contains(id)
                case .url(let url): return params.cancelsAll || urls.contains(url)
                }
            }
            return PrefetchCancelResult(cancelled: cancelled)
        })
    }

    /// Resolves and checks every item first (an unknown photo or an item already cached is
    /// reported finished at once and not queued), reserves the rest against the session's cap
    /// (all or none: over the cap the whole request is 1012 and nothing starts), then starts
    /// one background task per queued item.
    private func prefetch(_ params: PrefetchParams, session: Session) async throws(ServerError) -> PrefetchResult {
        let configuration = services.configuration.current
        let size = params.size ?? configuration.cache.thumbnailSize
        let pipeline = services.pipeline
        let prefetches = sessions.tables(for: session).prefetches
        let references = (params.photos ?? []).map(ImageReference.photo) + (params.urls ?? []).map(ImageReference.url)
        var settled: [PrefetchFinished] = []
        var wanted: [PrefetchTable.Key] = []
        var journeys: [PrefetchTable.Key: ThumbnailJourney] = [:]
        for reference in references {
            let key = PrefetchTable.Key(reference: reference, size: size)
            guard journeys[key] == nil else { continue }
            do {
                var journey = pipeline.journey(to: reference, size: size, priority: .prefetch)
                if try await journey.cached() != nil {
                    settled.append(PrefetchFinished(image: reference, ok: true))
                } else {
                    journeys[key] = journey
                    wanted.append(key)
                }
            } catch {
                settled.append(PrefetchFinished(image: reference, ok: false, error: Answer.wireError(for: error)))
            }
        }
        let reserved = try prefetches.reserve(wanted, cap: configuration.daemon.maxPendingPerSession)
        for finished in settled { prefetches.notify(finished) }
        for (key, serial) in reserved {
            guard let journey = journeys[key] else { continue }
            let task = Task {
                var journey = journey
                let finished: PrefetchFinished
                do {
                    _ = try await journey.deliver()  // from the fetch on: both tiers just missed
                    finished = PrefetchFinished(image: key.reference, ok: true)
                } catch {
                    finished = PrefetchFinished(image: key.reference, ok: false, error: Answer.wireError(for: error))
                }
                prefetches.finish(key: key, serial: serial, finished)
            }
            prefetches.attach(task, key: key, serial: serial)
        }
        return PrefetchResult(queued: reserved.count)
    }
}
