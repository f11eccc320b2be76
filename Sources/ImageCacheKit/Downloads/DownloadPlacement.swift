import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Putting a verified body at its final name, every step relative to the job's folder held
/// open, and proving that a file found already there after a restart is the job's.
enum DownloadPlacement {
    /// Names the verified body and moves it to its final name, on the blocking-I/O threads,
    /// after checking the folder against `roots` once more (a folder that left the roots while
    /// the body arrived fails 1010, and nothing is moved).
    static func checkAndMove(_ record: DownloadRecord, format: ImageFormat, folder: DirectoryHandle,
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

    /// fsyncs the whole file at `path` and proves it decodes; its header and size (a file found
    /// already at its final name after a restart: its bytes were verified before the move).
    static func verify(_ path: String, decodes: DecodeBudget, maxPixels: Int) async throws -> (header: ImageHeader, bytes: Int) {
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
        let ext = format.fileExtension
        if record.defaultName, reservation.ext != ext {
            try reservation.checkPart(in: folder)
            var fresh = try FileReservation.reserve(in: folder, stem: reservation.stem, ext: ext,
                                                    overwrite: record.overwrite, held: held, replacing: policy)
            guard renameat(folder.fd, reservation.partName, folder.fd, fresh.partName) == 0 else {
                let failure = FileOps.failure("cannot rename \(reservation.partPath)")
                fresh.discard(in: folder)
                throw failure
            }
            // The body's identity is the one to find again after a crash, not the fresh `.part`'s.
            fresh.part = reservation.part
            reservation.discard(in: folder)
            reservation = fresh
        }
        return try reservation.commit(in: folder, overwrite: record.overwrite, held: held, replacing: policy)
    }
}
