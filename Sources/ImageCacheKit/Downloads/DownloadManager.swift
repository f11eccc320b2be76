import Foundation
import ImageCacheConfig
import ImageCacheProtocol
import Logging

/// The daemon's download jobs (docs/protocol.md, "download"): owned by the daemon, not by the
/// session that asked, so they go on when the client disconnects and resume when the daemon
/// starts again.
///
/// The manager is the jobs' one actor: it keeps the job table (`DownloadJobTable`, written to
/// disk by `DownloadTableWriter` into `DownloadJobStore`'s file), answers `download.status`,
/// `download.list` and `download.cancel` from it for the owners allowed to see each job, and
/// starts each job's run (`DownloadRun`: transfer, verification, folder checks, placement),
/// which runs isolated to this actor and keeps its live parts (`DownloadRunParts`) here.
///
/// A job: resolve the image URL (a photo's `full` or `regular` variant), check and reserve
/// the destination (`DownloadDestination`, `FileReservation`), then run it. What a run does,
/// how it resumes, and how it stays confined to its folder: `DownloadRun`.
///
/// Shutdown (`TransferEngine.shutdown`, reason `shutdown`) leaves jobs unfinished on disk,
/// `.part` included, so the next start resumes them; only a real failure or
/// `download.cancel` removes the `.part` and the reserved name.
public actor DownloadManager {
    /// What the manager uses of the daemon.
    public struct Dependencies: Sendable {
        /// The shared engine (downloads queue at `.download` priority beside thumbnails).
        public var transfers: TransferEngine
        /// Photo ids → URLs and the Unsplash tracking link.
        public var registry: PhotoRegistry
        /// The process-wide decode bound; verification is a decode.
        public var decodes: DecodeBudget
        /// The configuration now (roots, pixel limit, keys), read per job.
        public var configuration: @Sendable () -> CacheConfiguration
        /// `cache_dir`: the folder whose job table (`DownloadJobStore`, in
        /// `configuration().resolvedStateDirectory`) this manager keeps, and where an older
        /// daemon kept the table (`downloads/jobs.json`), moved from there on first start.
        package var cacheDirectory: String
        /// The job table, opened (its lock taken) by the daemon at start, so that a table
        /// in use stops start-up; nil: the manager opens it itself, and keeps no jobs across
        /// restarts when it cannot.
        package var jobStore: DownloadJobStore?
        /// Job events (queued, finished, failed, resumed) at `info`/`notice`.
        public var logger: Logger

        /// Everything a manager needs, usually the daemon's shared parts (`DaemonServices`).
        public init(transfers: TransferEngine, registry: PhotoRegistry, decodes: DecodeBudget,
                    configuration: @escaping @Sendable () -> CacheConfiguration, cacheDirectory: String, logger: Logger) {
            self.transfers = transfers
            self.registry = registry
            self.decodes = decodes
            self.configuration = configuration
            self.cacheDirectory = cacheDirectory
            self.logger = logger
        }
    }

    /// The width `regular` asks for (Unsplash's `regular` size).
    package static let regularWidth = 1080

    let dependencies: Dependencies
    let observer: @Sendable (DownloadEvent) -> Void
    private let writer: DownloadTableWriter?
    /// Every job; changed only here and by the runs, isolated to this actor.
    var table: DownloadJobTable
    /// What each job has while it is submitted or running, by id.
    var runs: [String: DownloadRunParts] = [:]
    private var started = false

    /// Loads the job table (nothing runs until `start()`).
    ///
    /// - Parameter observer: called for every job event, from any thread; it must not block.
    package init(dependencies: Dependencies, observer: @escaping @Sendable (DownloadEvent) -> Void) {
        self.dependencies = dependencies
        self.observer = observer
        var loaded: [String: DownloadRecord] = [:]
        let stateDirectory = dependencies.configuration().resolvedStateDirectory
        do {
            let store = try dependencies.jobStore
                ?? DownloadJobStore(stateDirectory: stateDirectory, cacheDirectory: dependencies.cacheDirectory)
            store.migrate(fromCacheDirectory: dependencies.cacheDirectory, logger: dependencies.logger)
            for record in store.load(logger: dependencies.logger) { loaded[record.id] = record }
            writer = DownloadTableWriter(store: store, logger: dependencies.logger)
        } catch {
            dependencies.logger.error("download jobs will not survive a restart: cannot use the state folder",
                                      metadata: ["folder": "\(stateDirectory)", "reason": "\(error)"])
            writer = nil
        }
        table = DownloadJobTable(records: loaded)
    }

    /// A fresh job id, so a caller can subscribe to a job before it starts.
    package nonisolated static func makeJobID() -> String {
        // Always 12 hex digits, leading zeros kept: ids of one width line up in every list.
        let hex = String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
        return "dl-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    /// Drops jobs ended more than a day ago and resumes every unfinished one.
    public func start() {
        guard !started else { return }
        started = true
        prune()
        let unfinished = table.unfinished
        if !unfinished.isEmpty {
            dependencies.logger.notice("resuming downloads", metadata: ["jobs": "\(unfinished.count)"])
        }
        for record in unfinished { launch(record.id) }
    }

    // MARK: Methods

    /// Checks and reserves the destination, records the job as `requester`'s and starts it;
    /// the job as it was recorded.
    ///
    /// - Throws: `not_found` for an unknown photo id; `forbidden` for a folder outside the
    ///   download roots or one that refuses new files, and for a peer of a shared daemon, a
    ///   folder or file that peer could not write itself (`PeerDestinationCheck`), or any
    ///   destination when its credentials are unknown.
    package func submit(_ params: DownloadParams, id: String, by requester: Requester = .daemon) async throws(DownloadError) -> DownloadRecord {
        guard let owner = requester.uid else { throw .unknownPeer }
        let configuration = dependencies.configuration()
        let url: String
        switch params.image {
        case .photo(let photoID):
            guard let photo = await dependencies.registry.photo(id: photoID) else {
                throw .unknownPhoto(id: photoID)
            }
            guard !photo.photo.isVideo, let full = photo.photo.fullURL else { throw .notAPhoto(id: photoID) }
            url = params.variant == .full ? full : photo.variant(forWidth: Self.regularWidth).url
        case .url(let given):
            url = given
        }
        let checkedName = try params.filename.map { (name) throws(DownloadError) in try DownloadDestination.checkedName(name) } ?? nil
        let folder = try DownloadDestination.resolveDirectory(params.directory, roots: configuration.resolvedDownloadRoots,
                                                              for: requester)
        let stem: String
        let ext: String?
        let defaultName: Bool
        if let clean = checkedName {
            (stem, ext) = DownloadDestination.split(clean)
            defaultName = false
        } else {
            stem = DownloadDestination.defaultStem(photo: params.image.photoID, url: url)
            ext = DownloadDestination.guessedExtension(url: url)
            defaultName = true
        }
        let reservation = try FileReservation.reserve(in: folder, stem: stem, ext: ext, overwrite: params.overwrite,
                                                      held: table.heldNames(in: folder.path, except: id),
                                                      replacing: table.replacePolicy(owner: owner))
        runs[id, default: DownloadRunParts()].folder = folder
        let record = DownloadRecord(id: id, photo: params.image.photoID, url: url, variant: params.variant, state: .queued,
                                    reservation: reservation, defaultName: defaultName, overwrite: params.overwrite,
                                    validator: nil, received: 0, total: nil, width: nil, height: nil, error: nil,
                                    tracked: false, createdAt: Date(), endedAt: nil, owner: owner)
        table.records[id] = record
        persist()
        // `{job}` promises a job that survives a restart: the table holds it before the answer.
        // (Waits are coalesced: jobs submitted together share one table write.)
        await flush()
        dependencies.logger.info("download queued", metadata: [
            "job": "\(id)", "url": "\(URLRedaction.redact(url))", "path": "\(reservation.path)",
        ])
        launch(id)
        return record
    }

    /// The job now, with its live byte count.
    ///
    /// - Throws: `not_found` for an unknown (or expired) job id, and, in the same words, for
    ///   a job `viewer` may not see (another uid's): its existence is not told.
    package func status(_ id: String, for viewer: Requester = .daemon) throws(DownloadError) -> DownloadRecord {
        snapshot(try table.visibleRecord(id, to: viewer))
    }

    /// Every job known that `viewer` may see, newest first (unfinished ones, and those ended
    /// within a day), with their live byte counts.
    package func list(for viewer: Requester = .daemon) -> [DownloadRecord] {
        prune()
        return table.visible(to: viewer).map(snapshot)
    }

    /// Stops a queued or running job, removes its `.part` and its reserved name, and reports
    /// it failed with `cancelled` to its watchers. A failed job's leftovers are removed too.
    ///
    /// - Returns: false when the job had already ended.
    /// - Throws: `not_found` for an unknown job id, or one `requester` may not see.
    package func cancel(_ id: String, by requester: Requester = .daemon) throws(DownloadError) -> Bool {
        var record = try table.visibleRecord(id, to: requester)
        guard record.isUnfinished else {
            if record.state == .failed, let folder = try? openFolder(record) { record.reservation.discard(in: folder) }
            return false
        }
        let failure = DownloadFailure(Cancellation(.download))
        record.state = .cancelled
        record.error = failure
        record.endedAt = Date()
        let parts = runs.removeValue(forKey: id)
        if let meter = parts?.meter { record.received = meter.snapshot.received }
        table.records[id] = record
        parts?.handle?.cancel(reason: "cancelled")
        // The run's task too: a run waiting for a decode permit (re-checking a placed file after
        // a restart) or at any other step that stops on cancellation stops now, not at its end.
        parts?.task?.cancel()
        parts?.meter?.end()
        // Only in the folder held open (or reached again beneath a current root): a folder
        // swapped for a symlink never has anything removed through it.
        if let folder = parts?.folder ?? (try? openFolder(record)) { record.reservation.discardWithCommitted(in: folder) }
        persist()
        dependencies.logger.info("download cancelled", metadata: ["job": "\(id)"])
        observer(.failed(job: id, failure: failure))
        return true
    }

    /// Whether the job is still queued or running (false for unknown ids).
    package func isUnfinished(_ id: String) -> Bool {
        table.records[id]?.isUnfinished ?? false
    }

    /// Returns once every change made so far is on disk (tests, and a clean stop).
    package func flush() async {
        await writer?.flush()
    }

    // MARK: For the runs

    /// Starts the job's run, once (a `start()` and a `submit` may both ask for a new job).
    private func launch(_ id: String) {
        guard runs[id]?.task == nil else { return }
        let run = DownloadRun(id: id)
        runs[id, default: DownloadRunParts()].task = Task { await run.execute(on: self) }
    }

    /// The job's folder reached again beneath a root of the current configuration.
    func openFolder(_ record: DownloadRecord) throws(DownloadError) -> DirectoryHandle {
        try DirectoryHandle.open(record.reservation.directory, roots: currentRoots(), create: false)
    }

    /// The download roots of the configuration now, resolved: a closure, so a transfer's
    /// `.part` opener can ask again at every attempt from the transfer thread.
    nonisolated var currentRoots: @Sendable () -> [String] {
        let configuration = dependencies.configuration
        return { DownloadDestination.resolvedRoots(configuration().resolvedDownloadRoots, create: false) }
    }

    /// Hands the table to the writer (dropping the jobs past their retention first).
    func persist() {
        guard let writer else { return }
        table.dropEnded()
        writer.save(Array(table.records.values))
    }

    // MARK: Helpers

    /// The record with its live byte count, while a meter counts them.
    private func snapshot(_ record: DownloadRecord) -> DownloadRecord {
        guard let live = runs[record.id]?.meter?.snapshot else { return record }
        var record = record
        record.received = live.received
        record.total = live.total ?? record.total
        return record
    }

    private func prune() {
        if table.dropEnded() { persist() }
    }
}
