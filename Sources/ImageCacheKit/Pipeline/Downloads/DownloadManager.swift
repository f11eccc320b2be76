import Foundation
import ImageCacheProtocol
import Logging

/// The daemon's download jobs (CONTRACT §5 `download*`): owned by the daemon, not by the
/// session that asked, so they go on when the client disconnects and resume when the daemon
/// starts again.
///
/// A job: resolve the image URL (a photo's `full` or `regular` variant), check and reserve
/// the destination (`DownloadDestination`, `FileReservation`), stream the body into
/// `<name>.part` through the shared engine at `download` priority (below visible thumbnails,
/// above prefetches), fsync it, prove it decodes, move it to its final name without replacing
/// anything, and, for Unsplash, request the download-tracking endpoint once.
///
/// Resuming needs the validator the partial body came with, and the engine reports headers
/// only when a transfer ends. So a job that starts from byte 0 first asks for one byte
/// (`Range: bytes=0-0`) and records the answer's strong `ETag` (else `Last-Modified`) in the
/// job table before the body flows; after a crash the `.part` continues with `Range` +
/// `If-Range`, and a server that ignores or refuses the range (200, 416) gets a clean restart
/// from the engine. A server that ignores the one-byte range answers the whole body, which is
/// then simply kept.
///
/// Confinement (issue 20): a job's folder is held open (`DirectoryHandle`, opened beneath its
/// root without following symlinks) and every filesystem step is relative to it; the folder is
/// re-checked against the current configuration's roots at the job's (re)start, at every
/// attempt of its transfer (the `.part` opener) and before the move, and a job whose folder
/// left them fails `forbidden` saying why.
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
        /// `cache_dir`; the job table lives in `downloads/` under it.
        public var cacheDirectory: String
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

    /// How long finished, failed and cancelled jobs stay listed.
    public static let retention: TimeInterval = 24 * 3600

    /// The width `regular` asks for (Unsplash's `regular` size).
    public static let regularWidth = 1080

    private let dependencies: Dependencies
    private let observer: @Sendable (DownloadEvent) -> Void
    private let store: DownloadJobStore?
    private var records: [String: DownloadRecord]
    private var meters: [String: DownloadProgressMeter] = [:]
    private var handles: [String: TransferHandle] = [:]
    private var tasks: [String: Task<Void, Never>] = [:]
    /// The folder of each job that has one open: checked beneath its root at submit or at the
    /// job's (re)start, and the one every later filesystem step of the job is relative to.
    private var folders: [String: DirectoryHandle] = [:]
    private var started = false
    /// A table write is running / changes wait for the next one.
    private var writing = false
    private var dirty = false
    private var persistWaiters: [CheckedContinuation<Void, Never>] = []

    /// Loads the job table (nothing runs until `start()`).
    ///
    /// - Parameter observer: called for every job event, from any thread; it must not block.
    public init(dependencies: Dependencies, observer: @escaping @Sendable (DownloadEvent) -> Void) {
        self.dependencies = dependencies
        self.observer = observer
        var loaded: [String: DownloadRecord] = [:]
        do {
            let store = try DownloadJobStore(cacheDirectory: dependencies.cacheDirectory)
            for record in store.load(logger: dependencies.logger) { loaded[record.id] = record }
            self.store = store
        } catch {
            dependencies.logger.error("download jobs will not survive a restart: cannot use the cache folder",
                                      metadata: ["folder": "\(dependencies.cacheDirectory)/downloads", "reason": "\(error)"])
            self.store = nil
        }
        records = loaded
    }

    /// A fresh job id, so a caller can subscribe to a job before it starts.
    public nonisolated static func makeJobID() -> String {
        "dl-" + String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
    }

    /// Drops jobs ended more than a day ago and resumes every unfinished one.
    public func start() {
        guard !started else { return }
        started = true
        prune()
        let unfinished = records.values.filter(\.isUnfinished).sorted { $0.createdAt < $1.createdAt }
        if !unfinished.isEmpty {
            dependencies.logger.notice("resuming downloads", metadata: ["jobs": "\(unfinished.count)"])
        }
        for record in unfinished { launch(record.id) }
    }

    // MARK: Methods

    /// Checks and reserves the destination, records the job and starts it.
    ///
    /// - Throws: `not_found` for an unknown photo id; `forbidden` for a folder outside the
    ///   download roots or one that refuses new files.
    public func submit(_ params: DownloadParams, id: String) async throws(RPCError) -> DownloadJob {
        let configuration = dependencies.configuration()
        let url: String
        switch params.image {
        case .photo(let photoID):
            guard let photo = await dependencies.registry.photo(id: photoID) else {
                throw RPCError(.notFound, "unknown photo id \(photoID) (search for it first)")
            }
            url = params.variant == .full ? photo.photo.fullURL : photo.variant(forWidth: Self.regularWidth).url
        case .url(let given):
            url = given
        }
        let checkedName = try params.filename.map { (name) throws(RPCError) in try DownloadDestination.checkedName(name) } ?? nil
        let folder = try DownloadDestination.resolveDirectory(params.directory, roots: configuration.resolvedDownloadRoots)
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
                                                      held: heldNames(in: folder.path, except: id))
        folders[id] = folder
        let record = DownloadRecord(id: id, photo: params.image.photoID, url: url, variant: params.variant, state: .queued,
                                    reservation: reservation, defaultName: defaultName, overwrite: params.overwrite,
                                    validator: nil, received: 0, total: nil, width: nil, height: nil, error: nil,
                                    tracked: false, createdAt: Date(), endedAt: nil)
        records[id] = record
        persist()
        // `{job}` promises a job that survives a restart: the table holds it before the answer.
        // (Waits are coalesced: jobs submitted together share one table write.)
        await flush()
        dependencies.logger.info("download queued", metadata: [
            "job": "\(id)", "url": "\(URLRedaction.redact(url))", "path": "\(reservation.path)",
        ])
        launch(id)
        return record.job()
    }

    /// The job now, with its live byte count.
    ///
    /// - Throws: `not_found` for an unknown (or expired) job id.
    public func status(_ id: String) throws(RPCError) -> DownloadJob {
        guard let record = records[id] else { throw Self.unknown(id) }
        return snapshot(record)
    }

    /// Every job known, newest first (unfinished ones, and those ended within a day).
    public func list() -> [DownloadJob] {
        prune()
        return records.values.sorted { $0.createdAt > $1.createdAt }.map(snapshot)
    }

    /// Stops a queued or running job, removes its `.part` and its reserved name, and reports
    /// it failed with `cancelled` to its watchers. A failed job's leftovers are removed too.
    ///
    /// - Returns: false when the job had already ended.
    /// - Throws: `not_found` for an unknown job id.
    public func cancel(_ id: String) throws(RPCError) -> Bool {
        guard var record = records[id] else { throw Self.unknown(id) }
        guard record.isUnfinished else {
            if record.state == .failed, let folder = try? openFolder(record) { record.reservation.discard(in: folder) }
            return false
        }
        let error = RPCError(.cancelled, "the download was cancelled", reason: "cancelled")
        record.state = .cancelled
        record.error = error
        record.endedAt = Date()
        if let meter = meters[id] { record.received = meter.snapshot.received }
        records[id] = record
        handles.removeValue(forKey: id)?.cancel(reason: "cancelled")
        tasks.removeValue(forKey: id)?.cancel()
        meters.removeValue(forKey: id)?.end()
        // Only in the folder held open (or reached again beneath a current root): a folder
        // swapped for a symlink never has anything removed through it.
        if let folder = folders.removeValue(forKey: id) ?? (try? openFolder(record)) { record.reservation.discard(in: folder) }
        persist()
        dependencies.logger.info("download cancelled", metadata: ["job": "\(id)"])
        observer(.failed(DownloadFailed(job: id, error: error)))
        return true
    }

    /// Whether the job is still queued or running (false for unknown ids).
    public func isUnfinished(_ id: String) -> Bool {
        records[id]?.isUnfinished ?? false
    }

    // MARK: Running a job

    /// Starts the job's task, once (a `start()` and a `submit` may both ask for a new job).
    private func launch(_ id: String) {
        guard tasks[id] == nil else { return }
        tasks[id] = Task { await self.run(id) }
    }

    private func run(_ id: String) async {
        guard var record = records[id], record.isUnfinished else { return }
        record.state = .running
        records[id] = record
        do {
            let maxPixels = dependencies.configuration().network.maxImagePixels
            let decodes = dependencies.decodes
            // Every (re)start checks the folder against the roots of the configuration now: the
            // one held since `submit` must still be reached by its path, else (a resume after a
            // restart) it is opened again beneath a current root, without following a symlink.
            let folder = try startFolder(id, record)
            let partSize = FileOps.regularFileSize(in: folder, record.reservation.partName)
            let meter = DownloadProgressMeter(job: id, received: partSize ?? 0, total: record.total)
            meters[id] = meter
            if partSize == nil, let moved = record.reservation.committedFile(in: folder) {
                // Moved to its final name before a stop or crash kept the table from saying so.
                let header = try await Self.verify(moved.path, decodes: decodes, maxPixels: maxPixels)
                let photo: ProviderPhoto? = if let photoID = record.photo { await dependencies.registry.photo(id: photoID) } else { nil }
                await complete(id, reservation: moved, header: header.header, bytes: header.bytes, photo: photo)
                return
            }
            try await transfer(id, meter: meter)
            guard let current = records[id], current.state == .running else { return }
            let (reservation, header, bytes) = try await Self.verifyAndMove(current, folder: folder, roots: currentRoots(),
                                                                           held: heldNames(in: folder.path, except: id),
                                                                           decodes: decodes, maxPixels: maxPixels)
            let photo: ProviderPhoto? = if let photoID = current.photo { await dependencies.registry.photo(id: photoID) } else { nil }
            await complete(id, reservation: reservation, header: header, bytes: bytes, photo: photo)
        } catch {
            var failure = error as? RPCError ?? RPCError(.internal, "download failed: \(error)")
            if failure.kind != .forbidden, failure.data.reason != "shutdown", failure.data.reason != "cancelled",
               let why = folderProblem(id) {
                // A write refused because the folder or the `.part` moved: say that, not errno.
                failure = why
            }
            fail(id, error: failure)
        }
    }

    /// The job's folder for this (re)start, checked against the current roots.
    ///
    /// - Throws: `forbidden` (1010) saying why the folder can no longer be used: outside the
    ///   current roots, a symlink in its path, replaced, gone.
    private func startFolder(_ id: String, _ record: DownloadRecord) throws(RPCError) -> DirectoryHandle {
        if let held = folders[id] {
            do {
                try held.recheck(roots: currentRoots())
            } catch {
                throw RPCError(.forbidden, "the download cannot go on: \(error.message)")
            }
            return held
        }
        do {
            let folder = try openFolder(record)
            folders[id] = folder
            return folder
        } catch {
            throw RPCError(.forbidden, "the download cannot resume: \(error.message); its partial file, if any, is left where it is")
        }
    }

    /// The job's folder reached again beneath a root of the current configuration.
    private func openFolder(_ record: DownloadRecord) throws(RPCError) -> DirectoryHandle {
        try DirectoryHandle.open(record.reservation.directory, roots: currentRoots(), create: false)
    }

    /// The download roots of the configuration now, resolved: a closure, so a transfer's
    /// `.part` opener can ask again at every attempt from the transfer thread.
    private nonisolated var currentRoots: @Sendable () -> [String] {
        let configuration = dependencies.configuration
        return { DownloadDestination.resolvedRoots(configuration().resolvedDownloadRoots, create: false) }
    }

    /// Why the job's folder or `.part` can no longer be written, nil when both are as they
    /// were: run after a failed transfer, to name the real cause (1010).
    private func folderProblem(_ id: String) -> RPCError? {
        guard let folder = folders[id], let record = records[id] else { return nil }
        do {
            try folder.recheck(roots: currentRoots())
            if FileOps.lstatMode(in: folder, record.reservation.partName) != nil { try record.reservation.checkPart(in: folder) }
        } catch {
            return error.kind == .forbidden ? error : nil
        }
        return nil
    }

    /// The names (final and `.part`) that live jobs other than `id` hold in `directory`:
    /// no job may take or replace them, `overwrite` or not (issue 20, item 3).
    private func heldNames(in directory: String, except id: String) -> Set<String> {
        var names = Set<String>()
        for record in records.values where record.id != id && record.isUnfinished && record.reservation.directory == directory {
            names.insert(record.reservation.name)
            names.insert(record.reservation.partName)
        }
        return names
    }

    /// Brings the body into `.part`: a probe for the validator when starting from zero, then
    /// the transfer (resumed with `Range`/`If-Range` when bytes are already there).
    private func transfer(_ id: String, meter: DownloadProgressMeter) async throws {
        guard var record = records[id], let folder = folders[id] else { return }
        let part = record.reservation.partPath
        let partName = record.reservation.partName
        var size: Int
        if let existing = FileOps.regularFileSize(in: folder, partName) {
            size = existing
        } else {
            guard try FileOps.createExclusive(in: folder, partName) else {
                throw RPCError(.forbidden, "\(part) exists and is not a regular file")
            }
            size = 0
        }
        if size > 0, record.validator == nil {
            try FileOps.truncate(in: folder, partName)
            size = 0
        }
        if size == 0 {
            let probe = try await dependencies.transfers.fetch(HTTPRequest(
                url: record.url, headers: [("Range", "bytes=0-0")], priority: .download))
            guard records[id]?.state == .running else { return }
            record.validator = Self.validator(probe)
            record.total = Self.totalLength(probe) ?? record.total
            if probe.status == 200, !probe.body.isEmpty {
                // The range was ignored and the whole body came: keep it.
                try FileOps.write(probe.body, in: folder, partName)
                record.total = probe.body.count
                records[id] = record
                persist()
                if let progress = meter.record(received: probe.body.count, total: probe.body.count) {
                    observer(.progress(progress))
                }
                return
            }
            records[id] = record
            persist()
            // The validator must be on disk before the first body byte is: a `.part` without it
            // cannot be resumed after a crash, only restarted.
            await flush()
            guard records[id]?.state == .running else { return }
        }
        let request = TransferRequest(url: record.url, priority: .download,
                                      resume: .init(path: part, validator: record.validator ?? "\"\"",
                                                    open: folder.appendOpener(partName, roots: currentRoots)))
        let observer = self.observer
        let handle = dependencies.transfers.start(request) { event in
            if case .progress(let received, let expected) = event,
               let progress = meter.record(received: received, total: expected) {
                observer(.progress(progress))
            }
        }
        handles[id] = handle
        if records[id]?.state != .running { handle.cancel(reason: "cancelled") }
        do {
            _ = try await handle.result()
            handles[id] = nil
        } catch {
            handles[id] = nil
            throw error
        }
    }

    /// fsync, decode, name, move: on the blocking-I/O threads (never the actor or the
    /// cooperative pool), the decode under the process-wide decode bound. The folder is
    /// re-checked against `roots` once the body is verified, just before the move.
    private static func verifyAndMove(_ record: DownloadRecord, folder: DirectoryHandle, roots: [String], held: Set<String>,
                                      decodes: DecodeBudget, maxPixels: Int) async throws -> (FileReservation, ImageHeader, Int) {
        let verified = try await verify(record.reservation.partPath, decodes: decodes, maxPixels: maxPixels)
        let reservation = try await BlockingIO.run { () throws -> FileReservation in
            do throws(RPCError) {
                try folder.recheck(roots: roots)
            } catch {
                throw RPCError(.forbidden, "the download cannot be saved: \(error.message)")
            }
            return try move(record, format: verified.header.format, folder: folder, held: held)
        }
        return (reservation, verified.header, verified.bytes)
    }

    /// fsyncs the file at `path` and proves it decodes; its header and size.
    private static func verify(_ path: String, decodes: DecodeBudget,
                               maxPixels: Int) async throws -> (header: ImageHeader, bytes: Int) {
        let bytes = try await BlockingIO.run { () throws -> [UInt8] in
            try FileOps.syncFile(path)
            return try FileOps.read(path)
        }
        // The cost is computed before the permit (the bytes are already read: a download's
        // body is held either way); a scan bomb or a never-fitting image is refused here.
        let cost = try await BlockingIO.run { try Thumbnailer.validationCost(of: bytes, maxPixels: maxPixels) }
        let permit = try await decodes.acquire(cost)
        do {
            let header = try await BlockingIO.run { try Thumbnailer.validate(bytes, maxPixels: maxPixels) }
            decodes.release(permit)
            return (header, bytes.count)
        } catch {
            decodes.release(permit)
            throw error
        }
    }

    /// Names the verified body (the sniffed format fixes a default name's extension) and moves
    /// it to its final name, every step relative to the job's folder.
    private static func move(_ record: DownloadRecord, format: ImageFormat, folder: DirectoryHandle,
                             held: Set<String>) throws -> FileReservation {
        var reservation = record.reservation
        let ext = DownloadDestination.fileExtension(for: format)
        if record.defaultName, reservation.ext != ext {
            try reservation.checkPart(in: folder)
            var fresh = try FileReservation.reserve(in: folder, stem: reservation.stem, ext: ext,
                                                    overwrite: record.overwrite, held: held)
            guard renameat(folder.fd, reservation.partName, folder.fd, fresh.partName) == 0 else {
                let failure = FileOps.failure("cannot rename \(reservation.partPath)")
                fresh.discard(in: folder)
                throw failure
            }
            // The body's inode is the one to find again after a crash, not the fresh placeholder's.
            fresh.partInode = reservation.partInode
            reservation.discard(in: folder)
            reservation = fresh
        }
        return try reservation.commit(in: folder, overwrite: record.overwrite, held: held)
    }

    private func complete(_ id: String, reservation: FileReservation, header: ImageHeader, bytes: Int,
                          photo: ProviderPhoto?) async {
        meters.removeValue(forKey: id)?.end()
        tasks[id] = nil
        let folder = folders.removeValue(forKey: id)
        guard var record = records[id], record.state == .running else {
            // Cancelled while the file was being moved: the user asked for nothing to be left.
            if let folder { unlinkat(folder.fd, reservation.name, 0) }
            return
        }
        let tracking = trackingRequest(for: record, photo: photo)
        record.state = .finished
        record.reservation = reservation
        record.received = bytes
        record.total = bytes
        record.width = header.width
        record.height = header.height
        record.endedAt = Date()
        record.tracked = record.tracked || tracking != nil
        records[id] = record
        persist()
        // `download.finished` promises a durable result: the table says so before anyone hears it.
        await flush()
        dependencies.logger.info("download finished", metadata: [
            "job": "\(id)", "path": "\(reservation.path)", "bytes": "\(bytes)",
        ])
        observer(.finished(DownloadFinished(job: id, path: reservation.path, bytes: bytes,
                                            width: header.width, height: header.height)))
        if let tracking {
            let transfers = dependencies.transfers
            let logger = dependencies.logger
            Task {
                do {
                    let response = try await transfers.fetch(tracking)
                    if response.status >= 400 {
                        logger.warning("the download-tracking request failed", metadata: ["job": "\(id)", "status": "\(response.status)"])
                    }
                } catch {
                    logger.warning("the download-tracking request failed", metadata: ["job": "\(id)", "reason": "\(error)"])
                }
            }
        }
    }

    /// Unsplash's download-tracking request for a photo job not yet tracked (its API
    /// guidelines: once per download the user made), nil for anything else.
    private func trackingRequest(for record: DownloadRecord, photo: ProviderPhoto?) -> HTTPRequest? {
        guard !record.tracked, let photo, let provider = ProviderID(rawValue: photo.photo.provider) else { return nil }
        let settings = ProviderSettings(dependencies.configuration(), for: provider)
        return try? makePhotoProvider(provider, settings: settings).downloadTrackingRequest(for: photo)
    }

    private func fail(_ id: String, error: RPCError) {
        handles[id] = nil
        tasks[id] = nil
        meters.removeValue(forKey: id)?.end()
        let folder = folders.removeValue(forKey: id)
        guard var record = records[id], record.state == .running else { return }  // cancelled: already cleaned
        if error.kind == .cancelled, error.data.reason == "shutdown" {
            // The daemon is stopping: the job stays unfinished on disk, `.part` and all.
            record.state = .queued
            records[id] = record
            return
        }
        // Only in the folder held open: one that could not be reached safely is left alone.
        folder.map { record.reservation.discard(in: $0) }
        record.state = .failed
        record.error = error
        record.endedAt = Date()
        records[id] = record
        persist()
        dependencies.logger.notice("download failed", metadata: ["job": "\(id)", "error": "\(error)"])
        observer(.failed(DownloadFailed(job: id, error: error)))
    }

    // MARK: Helpers

    private func snapshot(_ record: DownloadRecord) -> DownloadJob {
        if let meter = meters[record.id] {
            let live = meter.snapshot
            return record.job(received: live.received, total: live.total)
        }
        return record.job()
    }

    private func prune() {
        let horizon = Date().addingTimeInterval(-Self.retention)
        let expired = records.values.filter { !$0.isUnfinished && ($0.endedAt ?? $0.createdAt) < horizon }.map(\.id)
        guard !expired.isEmpty else { return }
        for id in expired { records[id] = nil }
        persist()
    }

    /// Saves the table off the actor, coalescing: one write at a time, and changes made while
    /// it runs go into the next one. A job's state reaches the disk a few milliseconds after it
    /// changed (each write is temporary file + fsync + rename, so never torn); fsyncs on the
    /// actor would make every `download` wait for the disk (see docs/benchmarks.md, Downloads).
    private func persist() {
        guard let store else { return }
        dirty = true
        guard !writing else { return }
        writing = true
        dirty = false
        let snapshot = Array(records.values)
        let logger = dependencies.logger
        Task {
            do {
                try await BlockingIO.run { try store.save(snapshot) }
            } catch {
                logger.error("cannot save the download job table", metadata: ["reason": "\(error)"])
            }
            self.didPersist()
        }
    }

    private func didPersist() {
        writing = false
        if dirty { persist() }
        if !writing {
            let waiters = persistWaiters
            persistWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once every change made so far is on disk (tests, and a clean stop).
    public func flush() async {
        guard writing || dirty else { return }
        await withCheckedContinuation { persistWaiters.append($0) }
    }

    private static func unknown(_ id: String) -> RPCError {
        RPCError(.notFound, "no download job \(id)")
    }

    /// A strong `ETag`, else `Last-Modified`: what `If-Range` accepts.
    static func validator(_ response: HTTPResponse) -> String? {
        if let etag = response.header("ETag"), !etag.hasPrefix("W/"), !etag.isEmpty { return etag }
        return response.header("Last-Modified")
    }

    /// The full length from `Content-Range: bytes 0-0/N` of a 206, else nil.
    static func totalLength(_ response: HTTPResponse) -> Int? {
        response.status == 206 ? parseContentRangeTotal(response.header("Content-Range")) : nil
    }

    /// The complete length `N` of a `Content-Range: bytes A-B/N` value: a non-negative `Int`,
    /// nil for `*`, an absent, negative, oversized or unreadable value. The one parser of this
    /// header (pure, fuzzable).
    public static func parseContentRangeTotal(_ value: String?) -> Int? {
        guard let value, let slash = value.lastIndex(of: "/") else { return nil }
        let total = value[value.index(after: slash)...].trimmingCharacters(in: .whitespaces)
        guard !total.isEmpty, total.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(total)
    }
}
