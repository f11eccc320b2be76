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
        // Someone replaces the moved file with their own (another inode) before the cancel.
        try FileManager.default.removeItem(atPath: placed.path)
        try write("theirs", placed.path)
        other.discardWithCommitted(in: try handle(folder))
        #expect(read(placed.path) == "theirs")
    }

    @Test("a placeholder replaced by someone's non-empty file is left alone")
    func foreignFileAtPlaceholderKept() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reservation = try FileReservation.reserve(in: try handle(folder), stem: "r", ext: nil, overwrite: false)
        try write("body", reservation.partPath)
        try write("theirs", reservation.path)  // same inode, now with content: not an empty placeholder
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
