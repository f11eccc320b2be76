import Foundation
import ImageCacheConfig
import ImageCacheProtocol
import Logging

/// The daemon's download jobs (docs/protocol.md, "download"): owned by the daemon, not by the
/// session that asked, so they go on when the client disconnects and resume when the daemon
/// starts again.
///
/// A job: resolve the image URL (a photo's `full` or `regular` variant), check and reserve
/// the destination (`DownloadDestination`, `FileReservation`), stream the body into
/// `<name>.part` through the shared engine at `download` priority (below visible thumbnails,
/// above prefetches) while a `PartVerifier` proves it decodes as it arrives, fsync it, move it
/// to its final name without replacing anything, and, for Unsplash, request the
/// download-tracking endpoint once. A body found corrupt before its end fails the job at once
/// (`decode_failed`), without downloading the rest.
///
/// Resuming needs the validator the partial body came with. There is no probe request: the
/// engine reports the head of the real answer (`TransferEvent.response`, before its first body
/// byte is written) and the job records its strong `ETag` (else `Last-Modified`) and total in
/// the job table at once. A drop mid-body is continued by the engine inside the job's retries
/// (`Range` + `If-Range`); after a crash or a stop the `.part` continues the same way. A server
/// that ignores or refuses the range (200, 416), or answers a range that does not continue the
/// file, gets a clean restart from byte 0 from the engine.
///
/// Why the table and not an extended attribute on the `.part`: the table is the one place a
/// job's state lives, works on every filesystem, and its write is already coalesced off the
/// actor. A crash between the answer's head and that write (milliseconds) finds a `.part`
/// without a validator, which is restarted from 0 (a resume without `If-Range` could splice
/// two versions). A validator left stale by a restarted body (a 200 after `If-Range`) is safe
/// too: the server's resource no longer matches it, so `If-Range` makes it send the whole body.
///
/// Confinement: a job's folder is held open (`DirectoryHandle`, opened beneath its
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
        /// The wire's error object for what ended a job: a failed job keeps it (in the job
        /// table too) for `download.status`. The server's one mapping (`WireErrorMapping`).
        package var wireError: @Sendable (any Error) -> RPCError

        /// Everything a manager needs, usually the daemon's shared parts (`DaemonServices`).
        public init(transfers: TransferEngine, registry: PhotoRegistry, decodes: DecodeBudget,
                    configuration: @escaping @Sendable () -> CacheConfiguration, cacheDirectory: String, logger: Logger,
                    wireError: @escaping @Sendable (any Error) -> RPCError) {
            self.transfers = transfers
            self.registry = registry
            self.decodes = decodes
            self.configuration = configuration
            self.cacheDirectory = cacheDirectory
            self.logger = logger
            self.wireError = wireError
        }
    }

    /// How long finished, failed and cancelled jobs stay listed.
    package static let retention: TimeInterval = 24 * 3600

    /// The most ended jobs kept per owner (uid), the oldest dropped first: the table is
    /// rewritten whole on every change, so a day of busy downloads must not make it grow
    /// without bound, and one user's downloads never push out another's.
    package static let endedLimitPerOwner = 1000

    /// The width `regular` asks for (Unsplash's `regular` size).
    package static let regularWidth = 1080

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
    /// Why a job's verifier refused its body while the transfer still ran (the transfer is
    /// then cancelled, and this is the job's error rather than `cancelled`).
    private var refusals: [String: any Error] = [:]
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
        let stateDirectory = dependencies.configuration().resolvedStateDirectory
        do {
            let store = try dependencies.jobStore
                ?? DownloadJobStore(stateDirectory: stateDirectory, cacheDirectory: dependencies.cacheDirectory)
            store.migrate(fromCacheDirectory: dependencies.cacheDirectory, logger: dependencies.logger)
            for record in store.load(logger: dependencies.logger) { loaded[record.id] = record }
            self.store = store
        } catch {
            dependencies.logger.error("download jobs will not survive a restart: cannot use the state folder",
                                      metadata: ["folder": "\(stateDirectory)", "reason": "\(error)"])
            self.store = nil
        }
        records = loaded
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
        let unfinished = records.values.filter(\.isUnfinished).sorted { $0.createdAt < $1.createdAt }
        if !unfinished.isEmpty {
            dependencies.logger.notice("resuming downloads", metadata: ["jobs": "\(unfinished.count)"])
        }
        for record in unfinished { launch(record.id) }
    }

    // MARK: Methods

    /// Checks and reserves the destination, records the job as `requester`'s and starts it.
    ///
    /// - Throws: `not_found` for an unknown photo id; `forbidden` for a folder outside the
    ///   download roots or one that refuses new files, and for a peer of a shared daemon, a
    ///   folder or file that peer could not write itself (`PeerDestinationCheck`), or any
    ///   destination when its credentials are unknown.
    package func submit(_ params: DownloadParams, id: String, by requester: Requester = .daemon) async throws(DownloadError) -> DownloadJob {
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
                                                      held: heldNames(in: folder.path, except: id),
                                                      replacing: replacePolicy(owner: owner))
        folders[id] = folder
        let record = DownloadRecord(id: id, photo: params.image.photoID, url: url, variant: params.variant, state: .queued,
                                    reservation: reservation, defaultName: defaultName, overwrite: params.overwrite,
                                    validator: nil, received: 0, total: nil, width: nil, height: nil, error: nil,
                                    tracked: false, createdAt: Date(), endedAt: nil, owner: owner)
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
    /// - Throws: `not_found` for an unknown (or expired) job id, and, in the same words, for
    ///   a job `viewer` may not see (another uid's): its existence is not told.
    package func status(_ id: String, for viewer: Requester = .daemon) throws(DownloadError) -> DownloadJob {
        snapshot(try visibleRecord(id, to: viewer))
    }

    /// Every job known that `viewer` may see, newest first (unfinished ones, and those ended
    /// within a day).
    package func list(for viewer: Requester = .daemon) -> [DownloadJob] {
        prune()
        return records.values.filter { viewer.maySee(jobOwnedBy: $0.owner) }
            .sorted { $0.createdAt > $1.createdAt }.map(snapshot)
    }

    /// The record of job `id` when `viewer` may see it; the unknown-job error otherwise, the
    /// same for a job of another uid as for one that never existed.
    private func visibleRecord(_ id: String, to viewer: Requester) throws(DownloadError) -> DownloadRecord {
        guard let record = records[id], viewer.maySee(jobOwnedBy: record.owner) else { throw Self.unknown(id) }
        return record
    }

    /// What `overwrite` may replace for a job of `owner`: nil (anything, as today) for root and
    /// the daemon's uid; for any other uid, its own files and those the daemon saved for it.
    private func replacePolicy(owner: UInt32?) -> ReplacePolicy? {
        guard let owner, owner != 0, owner != PeerIdentity.daemonUID else { return nil }
        let saved = records.values.filter { $0.state == .finished && $0.owner == owner }.compactMap { record in
            record.reservation.partInode.map { ReplacePolicy.SavedFile(path: record.reservation.path, inode: $0) }
        }
        return ReplacePolicy(uid: owner, saved: Set(saved))
    }

    /// Stops a queued or running job, removes its `.part` and its reserved name, and reports
    /// it failed with `cancelled` to its watchers. A failed job's leftovers are removed too.
    ///
    /// - Returns: false when the job had already ended.
    /// - Throws: `not_found` for an unknown job id, or one `requester` may not see.
    package func cancel(_ id: String, by requester: Requester = .daemon) throws(DownloadError) -> Bool {
        var record = try visibleRecord(id, to: requester)
        guard record.isUnfinished else {
            if record.state == .failed, let folder = try? openFolder(record) { record.reservation.discard(in: folder) }
            return false
        }
        let error = dependencies.wireError(Cancellation(.download))
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
    package func isUnfinished(_ id: String) -> Bool {
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
                complete(id, reservation: moved, header: header.header, bytes: header.bytes, photo: photo)
                return
            }
            guard let body = try await transfer(id, meter: meter, maxPixels: maxPixels),
                  let current = records[id], current.state == .running else { return }
            let reservation = try await Self.checkAndMove(current, format: body.header.format, folder: folder,
                                                          roots: currentRoots(), held: heldNames(in: folder.path, except: id),
                                                          replacing: replacePolicy(owner: current.owner))
            let photo: ProviderPhoto? = if let photoID = current.photo { await dependencies.registry.photo(id: photoID) } else { nil }
            complete(id, reservation: reservation, header: body.header, bytes: body.bytes, photo: photo,
                           lastByte: body.lastByte)
        } catch {
            var failure = dependencies.wireError(error)
            if failure.kind != .forbidden, failure.data.reason != "shutdown", failure.data.reason != "cancelled",
               let why = folderProblem(id) {
                // A write refused because the folder or the `.part` moved: say that, not errno.
                failure = dependencies.wireError(why)
            }
            fail(id, error: failure)
        }
    }

    /// The job's folder for this (re)start, checked against the current roots.
    ///
    /// - Throws: `forbidden` (1010) saying why the folder can no longer be used: outside the
    ///   current roots, a symlink in its path, replaced, gone.
    private func startFolder(_ id: String, _ record: DownloadRecord) throws(DownloadError) -> DirectoryHandle {
        if let held = folders[id] {
            do {
                try held.recheck(roots: currentRoots())
            } catch {
                throw .folderRefused(stage: .goOn, cause: error)
            }
            return held
        }
        do {
            let folder = try openFolder(record)
            folders[id] = folder
            return folder
        } catch {
            throw .folderRefused(stage: .resume, cause: error)
        }
    }

    /// The job's folder reached again beneath a root of the current configuration.
    private func openFolder(_ record: DownloadRecord) throws(DownloadError) -> DirectoryHandle {
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
    private func folderProblem(_ id: String) -> DownloadError? {
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
    /// no job may take or replace them, `overwrite` or not.
    private func heldNames(in directory: String, except id: String) -> Set<String> {
        var names = Set<String>()
        for record in records.values where record.id != id && record.isUnfinished && record.reservation.directory == directory {
            names.insert(record.reservation.name)
            names.insert(record.reservation.partName)
        }
        return names
    }

    /// A `.part` whose every byte has arrived, verified and fsynced.
    private struct VerifiedBody {
        var header: ImageHeader
        var bytes: Int
        /// When the engine handed over the complete body (the start of `afterLastByteMs`).
        var lastByte: ContinuousClock.Instant
    }

    /// Brings the body into `.part` and verifies it while it arrives: one transfer, resumed
    /// with `Range`/`If-Range` when bytes and their validator are already there (those bytes
    /// are verified again first, while the rest is requested); the answer's head is recorded
    /// as it arrives. Nil when the job stopped meanwhile.
    private func transfer(_ id: String, meter: DownloadProgressMeter, maxPixels: Int) async throws -> VerifiedBody? {
        guard let record = records[id], let folder = folders[id] else { return nil }
        let part = record.reservation.partPath
        let partName = record.reservation.partName
        var size: Int
        if let existing = FileOps.regularFileSize(in: folder, partName) {
            size = existing
        } else {
            guard try FileOps.createExclusive(in: folder, partName) else {
                throw DownloadError.partNotRegular(part)
            }
            size = 0
        }
        if size > 0, record.validator == nil || size > (record.total ?? .max) {
            // Bytes whose validator never reached the table (a crash right after the answer's
            // head), or more than the body has: they cannot be continued safely.
            dependencies.logger.notice("restarting a partial download from byte 0", metadata: [
                "job": "\(id)", "bytes": "\(size)",
                "reason": "\(record.validator == nil ? "no validator was recorded" : "longer than the body")",
            ])
            try FileOps.truncate(in: folder, partName)
            size = 0
        }
        let verifier = PartVerifier(path: part, open: { folder.openForReading(partName) }, available: size, maxPixels: maxPixels, decodes: dependencies.decodes)
        let verification = Task { () async throws -> ImageHeader in
            do {
                return try await verifier.run()
            } catch {
                self.refused(id, error)
                throw error
            }
        }
        if size > 0, size == record.total {
            // Whole already (stopped between the last byte and the move): verify it as it is.
            verifier.end(size: size)
            let lastByte = ContinuousClock.now
            try await BlockingIO.run { try FileOps.syncFile(in: folder, partName) }
            return VerifiedBody(header: try await verification.value, bytes: size, lastByte: lastByte)
        }
        let request = TransferRequest(url: record.url, priority: .download,
                                      resume: .init(path: part, validator: record.validator, total: record.total,
                                                    open: folder.appendOpener(partName, roots: currentRoots)))
        let observer = self.observer
        let handle = dependencies.transfers.start(request) { event in
            switch event {
            case .progress(let received, let expected):
                verifier.advance(to: received)
                if let progress = meter.record(received: received, total: expected) { observer(.progress(progress)) }
            case .response(let offset, let total, let validator):
                if offset == 0 { verifier.restart() }
                Task { await self.answered(id, total: total, validator: validator) }
            case .chunk, .retrying:
                break
            }
        }
        handles[id] = handle
        if records[id]?.state != .running || refusals[id] != nil { handle.cancel(reason: "cancelled") }
        let result: TransferResult
        do {
            result = try await handle.result()
            handles[id] = nil
        } catch {
            handles[id] = nil
            verifier.abandon()
            if let refusal = refusals.removeValue(forKey: id) { throw refusal }
            throw error
        }
        let lastByte = ContinuousClock.now
        verifier.end(size: result.body.count)
        // fsync beside the end of the verification (the file is complete either way).
        async let synced: Void = BlockingIO.run { try FileOps.syncFile(in: folder, partName) }
        let header: ImageHeader
        do {
            header = try await verification.value
        } catch {
            try? await synced
            refusals[id] = nil
            throw error
        }
        try await synced
        return VerifiedBody(header: header, bytes: result.body.count, lastByte: lastByte)
    }

    /// The verifier refused the body while it was still arriving: the transfer stops now and
    /// the job fails with the verifier's error (`decode_failed`, `too_large`).
    private func refused(_ id: String, _ error: any Error) {
        guard let error = error as? any EngineError, error.kind != .cancelled, records[id]?.state == .running else { return }
        dependencies.logger.info("download refused while arriving", metadata: ["job": "\(id)", "error": "\(error)"])
        refusals[id] = error
        handles[id]?.cancel(reason: "decode_failed")
    }

    /// Names the verified body and moves it to its final name, on the blocking-I/O threads,
    /// after checking the folder against `roots` once more (a folder that left the roots while
    /// the body arrived fails 1010, and nothing is moved).
    private static func checkAndMove(_ record: DownloadRecord, format: ImageFormat, folder: DirectoryHandle,
                                     roots: [String], held: Set<String>, replacing policy: ReplacePolicy?) async throws -> FileReservation {
        try await BlockingIO.run { () throws -> FileReservation in
            do throws(DownloadError) {
                try folder.recheck(roots: roots)
            } catch {
                throw DownloadError.folderRefused(stage: .save, cause: error)
            }
            return try move(record, format: format, folder: folder, held: held, replacing: policy)
        }
    }

    /// Records the head of the answer now filling the `.part`: the validator its bytes come
    /// with and the body's total, in the table at once (the next resume's `If-Range`).
    private func answered(_ id: String, total: Int?, validator: String?) {
        guard var record = records[id], record.state == .running else { return }
        guard record.validator != validator || record.total != total else { return }
        record.validator = validator
        record.total = total
        records[id] = record
        persist()
    }

    /// fsyncs the whole file at `path` and proves it decodes; its header and size (a file found
    /// already at its final name after a restart: its bytes were verified before the move).
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
                             held: Set<String>, replacing policy: ReplacePolicy?) throws -> FileReservation {
        var reservation = record.reservation
        let ext = DownloadDestination.fileExtension(for: format)
        if record.defaultName, reservation.ext != ext {
            try reservation.checkPart(in: folder)
            var fresh = try FileReservation.reserve(in: folder, stem: reservation.stem, ext: ext,
                                                    overwrite: record.overwrite, held: held, replacing: policy)
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
        return try reservation.commit(in: folder, overwrite: record.overwrite, held: held, replacing: policy)
    }

    private func complete(_ id: String, reservation: FileReservation, header: ImageHeader, bytes: Int,
                          photo: ProviderPhoto?, lastByte: ContinuousClock.Instant? = nil) {
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
        // `download.finished` promises a durable file: it was fsynced, moved and its folder
        // fsynced before this. The table's "finished" follows within milliseconds, off this
        // path: waiting for it cost two more fsyncs (and any write already running for other
        // jobs) between the last byte and the notice. A crash before it lands leaves the job
        // "running" in the table with its `.part` gone; the next start finds the final file by
        // the `.part`'s inode (`committedFile`), verifies it and finishes the job without
        // fetching anything (`DownloadJobStoreTests.movedBeforeTheTableSaidSo`).
        persist()
        var metadata: Logger.Metadata = ["job": "\(id)", "path": "\(reservation.path)", "bytes": "\(bytes)"]
        if let lastByte {
            // From the complete body to this notice: verification's tail, fsync, move.
            let elapsed = ContinuousClock.now - lastByte
            let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            metadata["afterLastByteMs"] = "\((ms * 100).rounded() / 100)"
        }
        dependencies.logger.info("download finished", metadata: metadata)
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
        refusals[id] = nil
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
        if dropEnded() { persist() }
    }

    /// Drops the ended jobs past the retention, and past `endedLimitPerOwner` for each owner
    /// (oldest first); whether any went.
    @discardableResult
    private func dropEnded() -> Bool {
        let horizon = Date().addingTimeInterval(-Self.retention)
        var dropped: [String] = []
        let ended = Dictionary(grouping: records.values.filter { !$0.isUnfinished }, by: \.owner)
        for (_, jobs) in ended {
            let newestFirst = jobs.sorted { ($0.endedAt ?? $0.createdAt) > ($1.endedAt ?? $1.createdAt) }
            for (rank, job) in newestFirst.enumerated()
            where rank >= Self.endedLimitPerOwner || (job.endedAt ?? job.createdAt) < horizon {
                dropped.append(job.id)
            }
        }
        for id in dropped { records[id] = nil }
        return !dropped.isEmpty
    }

    /// Saves the table off the actor, coalescing: one write at a time, and changes made while
    /// it runs go into the next one. A job's state reaches the disk a few milliseconds after it
    /// changed (each write is temporary file + fsync + rename, so never torn); fsyncs on the
    /// actor would make every `download` wait for the disk (see docs/benchmarks.md, Downloads).
    private func persist() {
        guard let store else { return }
        dropEnded()
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
    package func flush() async {
        guard writing || dirty else { return }
        await withCheckedContinuation { persistWaiters.append($0) }
    }

    private static func unknown(_ id: String) -> DownloadError {
        .unknownJob(id)
    }

}
