import Foundation
import ImageCacheProtocol
import Logging

/// One run of a download job, from its (re)start to its end: check the folder, bring the body
/// into `<name>.part` through the shared engine at `download` priority (below visible
/// thumbnails, above prefetches) while a `PartVerifier` proves it decodes as it arrives
/// (`transfer`, in DownloadRun+Transfer.swift), fsync it, move it to its final name without
/// replacing anything (`DownloadPlacement`), and, for Unsplash, request the download-tracking
/// endpoint once. A body found corrupt before its end fails the job at once (`decode_failed`),
/// without downloading the rest.
///
/// Isolated to its `DownloadManager` (every step takes it as `isolated`): the run reads and
/// changes the job table and the job's live parts on the manager's executor, so a
/// `download.cancel` lands only between its suspension points, as any other change.
///
/// Confinement: a job's folder is held open (`DirectoryHandle`, opened beneath its root
/// without following symlinks) and every filesystem step is relative to it; the folder is
/// re-checked against the current configuration's roots at the job's (re)start, at every
/// attempt of its transfer (the `.part` opener) and before the move, and a job whose folder
/// left them fails `forbidden` saying why.
struct DownloadRun: Sendable {
    /// The job's id.
    let id: String

    /// Runs the job to its end (finished, failed, or left queued by the daemon's stop).
    func execute(on manager: isolated DownloadManager) async {
        guard var record = manager.table.records[id], record.isUnfinished else {
            manager.runs[id] = nil  // cancelled before it started: nothing of it is left to run
            return
        }
        record.state = .running
        manager.table.records[id] = record
        let dependencies = manager.dependencies
        do {
            let maxPixels = dependencies.configuration().network.maxImagePixels
            // Every (re)start checks the folder against the roots of the configuration now: the
            // one held since `submit` must still be reached by its path, else (a resume after a
            // restart) it is opened again beneath a current root, without following a symlink.
            let folder = try startFolder(record, manager: manager)
            let partSize = FileOps.regularFileSize(in: folder, record.reservation.partName)
            let meter = DownloadProgressMeter(job: id, received: partSize ?? 0, total: record.total)
            manager.runs[id]?.meter = meter
            if partSize == nil, let moved = record.reservation.committedFile(in: folder) {
                // Moved to its final name before a stop or crash kept the table from saying so.
                let verified = try await DownloadPlacement.verify(moved.path, decodes: dependencies.decodes, maxPixels: maxPixels)
                let photo = await photo(of: record, manager: manager)
                complete(reservation: moved, header: verified.header, bytes: verified.bytes, photo: photo, manager: manager)
                return
            }
            guard let body = try await transfer(meter: meter, maxPixels: maxPixels, manager: manager),
                  let current = manager.table.records[id], current.state == .running else { return }
            let reservation = try await DownloadPlacement.checkAndMove(
                current, format: body.header.format, folder: folder, roots: manager.currentRoots(),
                held: manager.table.heldNames(in: folder.path, except: id), replacing: manager.table.replacePolicy(owner: current.owner))
            let photo = await photo(of: current, manager: manager)
            complete(reservation: reservation, header: body.header, bytes: body.bytes, photo: photo, lastByte: body.lastByte,
                     manager: manager)
        } catch {
            var failure = DownloadFailure(error)
            if failure.kind != .forbidden, failure.reason != "shutdown", failure.reason != "cancelled",
               let why = folderProblem(manager: manager) {
                // A write refused because the folder or the `.part` moved: say that, not errno.
                failure = DownloadFailure(why)
            }
            fail(failure, manager: manager)
        }
    }

    /// The photo of a photo job (for its tracking request), nil for a URL job.
    private func photo(of record: DownloadRecord, manager: isolated DownloadManager) async -> ProviderPhoto? {
        guard let photoID = record.photo else { return nil }
        return await manager.dependencies.registry.photo(id: photoID)
    }

    /// The job's folder for this (re)start, checked against the current roots.
    ///
    /// - Throws: `forbidden` (1010) saying why the folder can no longer be used: outside the
    ///   current roots, a symlink in its path, replaced, gone.
    private func startFolder(_ record: DownloadRecord, manager: isolated DownloadManager) throws(DownloadError) -> DirectoryHandle {
        if let held = manager.runs[id]?.folder {
            do {
                try held.recheck(roots: manager.currentRoots())
            } catch {
                throw .folderRefused(stage: .goOn, cause: error)
            }
            return held
        }
        do {
            let folder = try manager.openFolder(record)
            manager.runs[id]?.folder = folder
            return folder
        } catch {
            throw .folderRefused(stage: .resume, cause: error)
        }
    }

    /// Why the job's folder or `.part` can no longer be written, nil when both are as they
    /// were: run after a failed transfer, to name the real cause (1010).
    private func folderProblem(manager: isolated DownloadManager) -> DownloadError? {
        guard let folder = manager.runs[id]?.folder, let record = manager.table.records[id] else { return nil }
        do {
            try folder.recheck(roots: manager.currentRoots())
            if FileOps.lstatMode(in: folder, record.reservation.partName) != nil { try record.reservation.checkPart(in: folder) }
        } catch {
            return error.kind == .forbidden ? error : nil
        }
        return nil
    }

    /// The file is at its final name: the job is finished (unless it was cancelled meanwhile,
    /// when the file goes), its watchers told, and the tracking request sent.
    private func complete(reservation: FileReservation, header: ImageHeader, bytes: Int, photo: ProviderPhoto?,
                          lastByte: ContinuousClock.Instant? = nil, manager: isolated DownloadManager) {
        let parts = manager.runs.removeValue(forKey: id)
        parts?.meter?.end()
        guard var record = manager.table.records[id], record.state == .running else {
            // Cancelled while the file was being moved: the user asked for nothing to be left.
            if let folder = parts?.folder { unlinkat(folder.fd, reservation.name, 0) }
            return
        }
        let dependencies = manager.dependencies
        let tracking = DownloadTracking.request(for: record, photo: photo, configuration: dependencies.configuration())
        record.state = .finished
        record.reservation = reservation
        record.received = bytes
        record.total = bytes
        record.width = header.width
        record.height = header.height
        record.endedAt = Date()
        record.tracked = record.tracked || tracking != nil
        manager.table.records[id] = record
        // `download.finished` promises a durable file: it was fsynced, moved and its folder
        // fsynced before this. The table's "finished" follows within milliseconds, off this
        // path: waiting for it cost two more fsyncs (and any write already running for other
        // jobs) between the last byte and the notice. A crash before it lands leaves the job
        // "running" in the table with its `.part` gone; the next start finds the final file by
        // the `.part`'s inode (`committedFile`), verifies it and finishes the job without
        // fetching anything (`DownloadJobStoreTests.movedBeforeTheTableSaidSo`).
        manager.persist()
        var metadata: Logger.Metadata = ["job": "\(id)", "path": "\(reservation.path)", "bytes": "\(bytes)"]
        if let lastByte {
            // From the complete body to this notice: verification's tail, fsync, move.
            let elapsed = ContinuousClock.now - lastByte
            let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            metadata["afterLastByteMs"] = "\((ms * 100).rounded() / 100)"
        }
        dependencies.logger.info("download finished", metadata: metadata)
        manager.observer(.finished(DownloadFinished(job: id, path: reservation.path, bytes: bytes,
                                                    width: header.width, height: header.height)))
        if let tracking { DownloadTracking.send(tracking, job: id, transfers: dependencies.transfers, logger: dependencies.logger) }
    }

    /// The run ended without the file: the job fails with `failure` and its leftovers go,
    /// or, stopped by the daemon's shutdown, it stays unfinished on disk, `.part` and all.
    private func fail(_ failure: DownloadFailure, manager: isolated DownloadManager) {
        let parts = manager.runs.removeValue(forKey: id)
        parts?.meter?.end()
        guard var record = manager.table.records[id], record.state == .running else { return }  // cancelled: already cleaned
        if failure.isShutdown {
            record.state = .queued
            manager.table.records[id] = record
            return
        }
        // Only in the folder held open: one that could not be reached safely is left alone.
        parts?.folder.map { record.reservation.discard(in: $0) }
        record.state = .failed
        record.error = failure
        record.endedAt = Date()
        manager.table.records[id] = record
        manager.persist()
        manager.dependencies.logger.notice("download failed", metadata: ["job": "\(id)", "error": "\(failure)"])
        manager.observer(.failed(job: id, failure: failure))
    }
}
