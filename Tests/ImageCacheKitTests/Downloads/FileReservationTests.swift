import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// Exclusive names and the no-replace move, on real files.
@Suite("Downloads: name reservation and the final move", .timeLimit(.minutes(1)))
struct FileReservationTests {
    private func makeFolder() throws -> String {
        let folder = DownloadDestination.realPath(NSTemporaryDirectory())! + "/icres-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The folder held open, as a job holds it.
    private func handle(_ folder: String) throws -> DirectoryHandle {
        try DirectoryHandle.open(folder, roots: [folder], create: false)
    }

    private func write(_ text: String, _ path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func read(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("reserving creates the name and its .part exclusively, numbering past taken names")
    func numbering() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write("mine", folder + "/p.jpg")
        let first = try FileReservation.reserve(in: try handle(folder), stem: "p", ext: "jpg", overwrite: false)
        let second = try FileReservation.reserve(in: try handle(folder), stem: "p", ext: "jpg", overwrite: false)
        #expect(first.name == "p (1).jpg")
        #expect(second.name == "p (2).jpg")
        #expect(FileManager.default.fileExists(atPath: first.partPath))
        #expect(read(folder + "/p.jpg") == "mine")
    }

    @Test("commit never replaces a file that appeared at the name meanwhile")
    func commitDoesNotReplace() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "q", ext: "jpg", overwrite: false)
        try write("body", reservation.partPath)
        // Someone removes the placeholder and puts their own file there.
        try FileManager.default.removeItem(atPath: reservation.path)
        try write("theirs", reservation.path)
        let used = try reservation.commit(in: try handle(folder), overwrite: false)
        #expect(used.name == "q (1).jpg")
        #expect(read(folder + "/q.jpg") == "theirs")
        #expect(read(folder + "/q (1).jpg") == "body")
        #expect(!FileManager.default.fileExists(atPath: reservation.partPath))
    }

    @Test("a cancel removes the file the job's .part already became, and never another file at that name")
    func discardWithCommitted() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "c", ext: "jpg", overwrite: false)
        try write("body", reservation.partPath)
        let used = try reservation.commit(in: try handle(folder), overwrite: false)
        #expect(read(used.path) == "body")
        reservation.discardWithCommitted(in: try handle(folder))
        #expect(!FileManager.default.fileExists(atPath: used.path))

        let other = try FileReservation.reserve(in: try handle(folder), stem: "d", ext: "jpg", overwrite: false)
        try write("body", other.partPath)
        let placed = try other.commit(in: try handle(folder), overwrite: false)
        // Someone replaces the moved file with their own before the cancel (on tmpfs and ext4 it
        // may well get the moved file's inode number: it is still not the job's file).
        try FileManager.default.removeItem(atPath: placed.path)
        try write("theirs", placed.path)
        other.discardWithCommitted(in: try handle(folder))
        #expect(read(placed.path) == "theirs")
    }

    /// The identity of what stands at `path` now.
    private func identity(_ path: String) throws -> FileIdentity {
        try #require(FileIdentity.look(at: path, in: AT_FDCWD)).identity
    }

    /// `file` as the job would have recorded it had its own file, since deleted, carried the
    /// same inode number: same device and inode, an earlier birth (or change) time.
    private func reusedNumber(of file: FileIdentity) -> FileIdentity {
        FileIdentity(device: file.device, inode: file.inode, born: file.born.map { $0 - 1 }, changed: file.changed.map { $0 - 1 })
    }

    @Test("a file given the job's inode number after the job's own file was deleted is never removed by a cancel")
    func reusedInodeKeptByCancel() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Someone's file at the name the job's body was moved to, at the number that body had.
        try write("theirs", folder + "/c.jpg")
        let theirs = try identity(folder + "/c.jpg")
        #expect(theirs.device != nil && (theirs.born != nil || theirs.changed != nil))
        let job = FileReservation(directory: folder, stem: "c", ext: "jpg", number: 0, placeholder: nil, part: reusedNumber(of: theirs))
        #expect(job.committedFile(in: try handle(folder)) == nil, "a restart must not adopt it")
        job.discardWithCommitted(in: try handle(folder))
        #expect(read(folder + "/c.jpg") == "theirs")

        // The same steps with the file's true identity do remove it: the check is what kept it.
        var own = job
        own.part = theirs
        #expect(own.committedFile(in: try handle(folder))?.name == "c.jpg")
        own.discardWithCommitted(in: try handle(folder))
        #expect(!FileManager.default.fileExists(atPath: folder + "/c.jpg"))
    }

    @Test("an empty file given the placeholder's inode number is neither discarded nor removed at the move")
    func reusedInodeKeptAtPlaceholder() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var job = try FileReservation.reserve(in: try handle(folder), stem: "e", ext: "jpg", overwrite: false)
        try write("body", job.partPath)
        // The job's placeholder was deleted and someone's empty file took the name and its number.
        try FileManager.default.removeItem(atPath: job.path)
        #expect(FileManager.default.createFile(atPath: job.path, contents: nil))
        job.placeholder = reusedNumber(of: try identity(job.path))
        job.discard(in: try handle(folder))
        #expect(FileManager.default.fileExists(atPath: job.path), "someone's empty file stays")
        #expect(!FileManager.default.fileExists(atPath: job.partPath))

        try write("body", job.partPath)
        job.part = try identity(job.partPath)
        let used = try job.commit(in: try handle(folder), overwrite: false)
        #expect(used.name == "e (1).jpg")
        #expect(read(job.path) == "")
        #expect(read(used.path) == "body")
        let moved = try identity(used.path)
        #expect(used.part?.confirms(moved) == true, "the record names the moved file as it is now")
    }

    @Test("a record with a bare inode number (an older table) removes nothing by it")
    func bareInodeRemovesNothing() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let job = try FileReservation.reserve(in: try handle(folder), stem: "o", ext: "jpg", overwrite: false)
        try write("body", job.partPath)
        let placed = try job.commit(in: try handle(folder), overwrite: false)
        var old = job
        old.placeholder = nil
        old.part = FileIdentity(device: nil, inode: try identity(placed.path).inode, born: nil, changed: nil)
        #expect(old.committedFile(in: try handle(folder)) == nil)
        old.discardWithCommitted(in: try handle(folder))
        #expect(read(placed.path) == "body")
    }

    @Test("a placeholder replaced by someone's non-empty file is left alone")
    func foreignFileAtPlaceholderKept() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "r", ext: nil, overwrite: false)
        try write("body", reservation.partPath)
        try write("theirs", reservation.path)  // content at the placeholder's name: not an empty placeholder
        let used = try reservation.commit(in: try handle(folder), overwrite: false)
        #expect(used.name == "r (1)")
        #expect(read(folder + "/r") == "theirs")
    }

    @Test("overwrite replaces the existing file atomically at commit, not before")
    func overwrite() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try write("old", folder + "/o.png")
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "o", ext: "png", overwrite: true)
        #expect(reservation.name == "o.png")
        #expect(read(folder + "/o.png") == "old")
        try write("new", reservation.partPath)
        _ = try reservation.commit(in: try handle(folder), overwrite: true)
        #expect(read(folder + "/o.png") == "new")
    }

    @Test("discard removes the .part and our placeholder only")
    func discard() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "d", ext: "jpg", overwrite: false)
        reservation.discard(in: try handle(folder))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("a folder that refuses new files is 1010")
    func unwritableFolder() throws {
        guard getuid() != 0 else { return }  // root writes anywhere
        let folder = try makeFolder()
        defer {
            chmod(folder, 0o755)
            try? FileManager.default.removeItem(atPath: folder)
        }
        chmod(folder, 0o555)
        #expect(rpcError { _ = try FileReservation.reserve(in: try handle(folder), stem: "x", ext: "jpg", overwrite: false) }?.kind == .storageUnavailable)
    }

    @Test("commit refuses a .part replaced by a symlink, and moves nothing through it")
    func symlinkedPartRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outside = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try write("precious", outside + "/target")
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "s", ext: "jpg", overwrite: false)
        try FileManager.default.removeItem(atPath: reservation.partPath)
        try FileManager.default.createSymbolicLink(atPath: reservation.partPath, withDestinationPath: outside + "/target")
        let error = rpcError { _ = try reservation.commit(in: try handle(folder), overwrite: false) }
        #expect(error?.kind == .forbidden)
        #expect(error?.message.contains("symbolic link") == true)
        #expect(FileManager.default.fileExists(atPath: reservation.path))  // still only our empty placeholder
        #expect(read(reservation.path) == "")
        reservation.discard(in: try handle(folder))
        #expect(read(outside + "/target") == "precious")  // the link went, never its target
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("a hard link standing at the .part is refused too")
    func hardLinkedPartRefused() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "h", ext: "jpg", overwrite: false)
        try write("theirs", folder + "/elsewhere")
        try FileManager.default.removeItem(atPath: reservation.partPath)
        #expect(link(folder + "/elsewhere", reservation.partPath) == 0)
        #expect(rpcError { _ = try reservation.commit(in: try handle(folder), overwrite: false) }?.kind == .forbidden)
    }

    @Test("a name a live job holds is never taken: skipped without overwrite, refused with it")
    func heldNames() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let held: Set<String> = ["v.jpg", "v.jpg.part"]
        let skipped = try FileReservation.reserve(in: try handle(folder), stem: "v", ext: "jpg", overwrite: false, held: held)
        #expect(skipped.name == "v (1).jpg")
        let refused = rpcError { _ = try FileReservation.reserve(in: try handle(folder), stem: "v", ext: "jpg", overwrite: true, held: held) }
        #expect(refused?.kind == .forbidden)
        // A job that reserved with overwrite before the other job held the name never moves over it.
        try write("old", folder + "/w.png")
        let over = try FileReservation.reserve(in: try handle(folder), stem: "w", ext: "png", overwrite: true)
        try write("new", over.partPath)
        #expect(rpcError { _ = try over.commit(in: try handle(folder), overwrite: true, held: ["w.png"]) }?.kind == .forbidden)
        #expect(read(folder + "/w.png") == "old")
    }

    @Test("the final move goes into the folder held open, even after its path was swapped for a symlink")
    func moveStaysInHeldFolder() throws {
        let base = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base + "/in", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: base + "/out", withIntermediateDirectories: true)
        let folder = try DirectoryHandle.open(base + "/in", roots: [base], create: false)
        let reservation = try FileReservation.reserve(in: folder, stem: "m", ext: "jpg", overwrite: false)
        try write("body", reservation.partPath)
        try FileManager.default.moveItem(atPath: base + "/in", toPath: base + "/moved")
        try FileManager.default.createSymbolicLink(atPath: base + "/in", withDestinationPath: base + "/out")
        let used = try reservation.commit(in: folder, overwrite: false)
        #expect(used.name == "m.jpg")
        #expect(read(base + "/moved/m.jpg") == "body")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base + "/out").isEmpty)
    }
}
