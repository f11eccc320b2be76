import ImageCacheKit
import Logging

/// `download`, `download.status`, `download.list`, `download.cancel` and `download.watch`
/// (docs/protocol.md, `download`) on the socket, over the daemon's one `DownloadManager`.
///
/// Jobs belong to the manager (and so to the daemon); what belongs to sockets is who hears
/// about them: the session that submitted a job and every session that watches it get its
/// `download.progress`, `download.finished` and `download.failed`. A closed session is
/// dropped from every job it followed, so it simply stops receiving; the job goes on.
///
/// Each job is also the uid's that started it (the session's peer, `Requester`): a session
/// of another uid lists, reads, watches and cancels only its own, and is subscribed to a job
/// only after the manager said it may see it, so no notification of another's job reaches it
/// (docs/protocol.md, "Shared daemons").
public final class DownloadMethods: MethodFamily {
    /// The jobs themselves.
    public let manager: DownloadManager
    /// Job id → the sessions to tell, by session id.
    private let watchers: LockedState<[String: [UInt64: Session]]>
    /// Sessions whose close is already hooked.
    private let hooked = LockedState<Set<UInt64>>([])

    /// Builds the manager over the daemon's shared engine, registry and decode bound, with its
    /// job table (`services.jobStore`), and starts it (unfinished jobs resume now).
    public init(services: DaemonServices) {
        let watchers = LockedState<[String: [UInt64: Session]]>([:])
        self.watchers = watchers
        let configuration = services.configuration
        var dependencies = DownloadManager.Dependencies(
            transfers: services.transfers, registry: services.registry, decodes: services.decodes,
            configuration: { configuration.current }, cacheDirectory: configuration.current.resolvedCacheDirectory,
            logger: services.logger)
        dependencies.jobStore = services.jobStore
        manager = DownloadManager(dependencies: dependencies) { event in
            Self.deliver(event, to: watchers)
        }
        let manager = self.manager
        Task { await manager.start() }
    }

    /// Adds the five methods.
    public func register(in router: inout RPCRouter) {
        router.register(Methods.Download.self, .task { [self] params, context in
            let id = DownloadManager.makeJobID()
            // Subscribe first: a small file can finish before the answer is even sent.
            watch(id, session: context.session)
            do {
                let job = try await manager.submit(params, id: id, by: context.session.requester)
                return DownloadResult(job: job.id)
            } catch {
                unwatch(id, session: context.session.id)
                throw error
            }
        })
        router.register(Methods.DownloadStatus.self, .task { [self] params, context in
            DownloadJob(try await manager.status(params.job, for: context.session.requester))
        })
        router.register(Methods.DownloadList.self, .task { [self] _, context in
            DownloadListResult(jobs: await manager.list(for: context.session.requester).map(DownloadJob.init))
        })
        router.register(Methods.DownloadCancel.self, .task { [self] params, context in
            CancelledResult(cancelled: try await manager.cancel(params.job, by: context.session.requester))
        })
        router.register(Methods.DownloadWatch.self, .task { [self] params, context in
            let requester = context.session.requester
            // Whether this peer may see the job at all, before it hears anything of it (the
            // same `not_found` as for a job that never existed).
            _ = try await manager.status(params.job, for: requester)
            // Subscribe before reading the state, so nothing between the two is missed.
            watch(params.job, session: context.session)
            do {
                let job = try await manager.status(params.job, for: requester)
                if job.state != .queued, job.state != .running { unwatch(params.job, session: context.session.id) }
                return DownloadJob(job)
            } catch {
                unwatch(params.job, session: context.session.id)
                throw error
            }
        })
    }

    /// Adds `session` to the job's listeners, and makes sure its close removes it everywhere.
    private func watch(_ job: String, session: Session) {
        watchers.withLock { $0[job, default: [:]][session.id] = session }
        let first = hooked.withLock { $0.insert(session.id).inserted }
        if first {
            let id = session.id
            session.onClose { [watchers, hooked] in
                hooked.withLock { _ = $0.remove(id) }
                watchers.withLock { table in
                    for job in Array(table.keys) {
                        table[job]?[id] = nil
                        if table[job]?.isEmpty == true { table[job] = nil }
                    }
                }
            }
        }
    }

    private func unwatch(_ job: String, session: UInt64) {
        watchers.withLock { table in
            table[job]?[session] = nil
            if table[job]?.isEmpty == true { table[job] = nil }
        }
    }

    /// Sends one job event to its listeners; after a final event the listeners are dropped.
    private static func deliver(_ event: DownloadEvent, to watchers: LockedState<[String: [UInt64: Session]]>) {
        let sessions = watchers.withLock { table -> [Session] in
            let listening = Array(table[event.job, default: [:]].values)
            if event.isFinal { table[event.job] = nil }
            return listening
        }
        guard !sessions.isEmpty else { return }
        // A failure is worded for the wire here, once for every listener.
        let failed = if case .failed(let job, let failure) = event {
            DownloadFailed(job: job, error: WireErrorMapping.rpcError(for: failure))
        } else { nil as DownloadFailed? }
        for session in sessions where !session.isClosed {
            switch event {
            case .progress(let progress): session.notify(method: DownloadProgress.name.rawValue, params: progress)
            case .finished(let finished): session.notify(method: DownloadFinished.name.rawValue, params: finished)
            case .failed: if let failed { session.notify(method: DownloadFailed.name.rawValue, params: failed) }
            }
        }
    }
}
