import Foundation
import ImageCacheProtocol
import Logging

/// Bringing a job's body into its `.part` while it is verified.
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
extension DownloadRun {
    /// A `.part` whose every byte has arrived, verified and fsynced.
    struct VerifiedBody {
        var header: ImageHeader
        var bytes: Int
        /// When the engine handed over the complete body (the start of `afterLastByteMs`).
        var lastByte: ContinuousClock.Instant
    }

    /// Brings the body into `.part` and verifies it while it arrives: one transfer, resumed
    /// with `Range`/`If-Range` when bytes and their validator are already there (those bytes
    /// are verified again first, while the rest is requested); the answer's head is recorded
    /// as it arrives. Nil when the job stopped meanwhile.
    func transfer(meter: DownloadProgressMeter, maxPixels: Int, manager: isolated DownloadManager) async throws -> VerifiedBody? {
        guard let record = manager.table.records[id], let folder = manager.runs[id]?.folder else { return nil }
        let dependencies = manager.dependencies
        let part = record.reservation.partPath
        let partName = record.reservation.partName
        var size: Int
        if let existing = FileOps.regularFileSize(in: folder, partName) {
            size = existing
        } else {
            guard let created = try FileOps.createPlaceholder(in: folder, partName) else {
                throw DownloadError.partNotRegular(part)
            }
            // A `.part` made again (the reserved one was gone) is another file: its identity is
            // the one the final file will have, for a cancel or a restart to find it by.
            manager.table.records[id]?.reservation.part = created
            manager.persist()
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
        let verifier = PartVerifier(path: part, open: { folder.openForReading(partName) }, available: size, maxPixels: maxPixels,
                                    decodes: dependencies.decodes)
        let verification = Self.verification(by: verifier, of: self, manager: manager)
        if size > 0, size == record.total {
            // Whole already (stopped between the last byte and the move): verify it as it is.
            verifier.end(size: size)
            let lastByte = ContinuousClock.now
            try await BlockingIO.run { try FileOps.syncFile(in: folder, partName) }
            return VerifiedBody(header: try await verification.value, bytes: size, lastByte: lastByte)
        }
        let request = TransferRequest(url: record.url, priority: .download,
                                      resume: .init(path: part, validator: record.validator, total: record.total,
                                                    open: folder.appendOpener(partName, roots: manager.currentRoots)))
        let handle = dependencies.transfers.start(request, events: Self.events(of: id, verifier: verifier, meter: meter, manager: manager))
        manager.runs[id]?.handle = handle
        if manager.table.records[id]?.state != .running || manager.runs[id]?.refusal != nil { handle.cancel(reason: "cancelled") }
        let result: TransferResult
        do {
            result = try await handle.result()
            manager.runs[id]?.handle = nil
        } catch {
            manager.runs[id]?.handle = nil
            verifier.abandon()
            if let refusal = manager.runs[id]?.refusal {
                manager.runs[id]?.refusal = nil
                throw refusal
            }
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
            manager.runs[id]?.refusal = nil
            throw error
        }
        try await synced
        return VerifiedBody(header: header, bytes: result.body.count, lastByte: lastByte)
    }

    /// The verification of the body as it arrives; a refusal before the transfer ended stops
    /// the transfer (`refused`).
    private static func verification(by verifier: PartVerifier, of run: DownloadRun,
                                     manager: DownloadManager) -> Task<ImageHeader, any Error> {
        Task {
            do {
                return try await verifier.run()
            } catch {
                await run.refused(error, manager: manager)
                throw error
            }
        }
    }

    /// What the transfer tells the job, on the curl thread: progress feeds the verifier and the
    /// meter; the answer's head restarts the verifier (a body from byte 0) and is recorded.
    private static func events(of id: String, verifier: PartVerifier, meter: DownloadProgressMeter,
                               manager: DownloadManager) -> @Sendable (TransferEvent) -> Void {
        let observer = manager.observer
        return { event in
            switch event {
            case .progress(let received, let expected):
                verifier.advance(to: received)
                if let progress = meter.record(received: received, total: expected) { observer(.progress(progress)) }
            case .response(let offset, let total, let validator):
                if offset == 0 { verifier.restart() }
                Task { await DownloadRun(id: id).answered(total: total, validator: validator, manager: manager) }
            case .chunk, .retrying:
                break
            }
        }
    }

    /// The verifier refused the body while it was still arriving: the transfer stops now and
    /// the job fails with the verifier's error (`decode_failed`, `too_large`).
    func refused(_ error: any Error, manager: isolated DownloadManager) {
        guard let error = error as? any EngineError, error.kind != .cancelled,
              manager.table.records[id]?.state == .running else { return }
        manager.dependencies.logger.info("download refused while arriving", metadata: ["job": "\(id)", "error": "\(error)"])
        manager.runs[id]?.refusal = error
        manager.runs[id]?.handle?.cancel(reason: "decode_failed")
    }

    /// Records the head of the answer now filling the `.part`: the validator its bytes come
    /// with and the body's total, in the table at once (the next resume's `If-Range`).
    func answered(total: Int?, validator: String?, manager: isolated DownloadManager) {
        guard var record = manager.table.records[id], record.state == .running else { return }
        guard record.validator != validator || record.total != total else { return }
        record.validator = validator
        record.total = total
        manager.table.records[id] = record
        manager.persist()
    }
}
