import Foundation
import Glibc
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// Download folders opened beneath their root without following symlinks, with `openat2`
/// and with the component-wise `O_NOFOLLOW` walk older kernels get, on real folders.
@Suite("Downloads: folders held open beneath the root", .timeLimit(.minutes(1)))
struct DirectoryHandleTests {
    static let walks: [BeneathRoot.Walk] = [.automatic, .componentWise]

    /// A fresh resolved folder with `root` and `outside` in it, removed by the caller.
    private func makeFolders() throws -> (folder: String, root: String, outside: String) {
        let folder = DownloadDestination.realPath(NSTemporaryDirectory())! + "/icdh-" + UUID().uuidString
        for name in ["root", "outside"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
        }
        return (folder, folder + "/root", folder + "/outside")
    }

    @Test("this kernel has openat2 (the fallback is still exercised by forcing it)")
    func kernelHasOpenat2() {
        #expect(BeneathRoot.kernelHasOpenat2)
    }

    @Test("a folder below the root opens, missing folders are created one by one", arguments: walks)
    func opensAndCreates(walk: BeneathRoot.Walk) throws {
        let (folder, root, _) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let handle = try DirectoryHandle.open(root + "/a/b/c", roots: [root], create: true, walk: walk)
        #expect(handle.path == root + "/a/b/c")
        #expect(handle.root == root)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: root + "/a/b/c", isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(rpcError { _ = try DirectoryHandle.open(root + "/x", roots: [root], create: false, walk: walk) }?.kind == .storageUnavailable)
    }

    @Test("a symlink anywhere below the root is refused (1010), even one pointing inside it", arguments: walks)
    func symlinksRefused(walk: BeneathRoot.Walk) throws {
        let (folder, root, outside) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: root + "/real/sub", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/out", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: root + "/in", withDestinationPath: root + "/real")
        for path in [root + "/out", root + "/out/new", root + "/in/sub"] {
            let error = rpcError { _ = try DirectoryHandle.open(path, roots: [root], create: true, walk: walk) }
            #expect(error?.kind == .forbidden, "\(path)")
            #expect(error?.message.contains("symbolic link") == true, "\(error?.message ?? "")")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(rpcError { _ = try DirectoryHandle.open(outside, roots: [root], create: false, walk: walk) }?.kind == .forbidden)
        #expect(rpcError { _ = try DirectoryHandle.open(root + "/../outside", roots: [root], create: false, walk: walk) }?.kind == .forbidden)
    }

    @Test("recheck: the same folder passes; swapped for a symlink, replaced, gone or out of the roots is 1010 saying why",
          arguments: walks)
    func recheck(walk: BeneathRoot.Walk) throws {
        let (folder, root, outside) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let handle = try DirectoryHandle.open(root + "/trip", roots: [root], create: true, walk: walk)
        try handle.recheck(roots: [root], walk: walk)
        // Out of the configured roots (another configuration).
        let moved = rpcError { try handle.recheck(roots: [outside], walk: walk) }
        #expect(moved?.kind == .forbidden)
        #expect(moved?.message.contains("outside the download roots") == true)
        // Renamed and replaced by a symlink to a folder outside.
        try FileManager.default.moveItem(atPath: root + "/trip", toPath: root + "/trip-old")
        try FileManager.default.createSymbolicLink(atPath: root + "/trip", withDestinationPath: outside)
        let swapped = rpcError { try handle.recheck(roots: [root], walk: walk) }
        #expect(swapped?.kind == .forbidden)
        #expect(swapped?.message.contains("symbolic link") == true)
        // Replaced by another real folder.
        try FileManager.default.removeItem(atPath: root + "/trip")
        try FileManager.default.createDirectory(atPath: root + "/trip", withIntermediateDirectories: false)
        let replaced = rpcError { try handle.recheck(roots: [root], walk: walk) }
        #expect(replaced?.kind == .forbidden)
        #expect(replaced?.message.contains("replaced by another folder") == true)
        // Gone.
        try FileManager.default.removeItem(atPath: root + "/trip")
        let gone = rpcError { try handle.recheck(roots: [root], walk: walk) }
        #expect(gone?.kind == .forbidden)
        #expect(gone?.message.contains("is gone") == true)
        // The handle still reaches the folder it checked, wherever it went.
        #expect(handle.openForAppend("x") == -ENOENT)
    }

    @Test("recheck: a folder that cannot be opened for want of descriptors or by an I/O error keeps that kind, not 1010")
    func recheckUnderLoad() {
        let path = "/srv/photos/trip"
        let outOfDescriptors = DirectoryHandle.reopenFailure(.storage(StorageError("cannot open the download folder \(path)", errno: EMFILE)), path: path)
        #expect(outOfDescriptors.kind == .busy)
        #expect(!outOfDescriptors.description.contains("is gone"))
        #expect(DirectoryHandle.reopenFailure(.storage(StorageError("cannot open \(path)", errno: EIO)), path: path).kind == .storageUnavailable)
        for code in [ENOENT, ENOTDIR, ENAMETOOLONG] {
            let gone = DirectoryHandle.reopenFailure(.storage(StorageError("cannot open \(path)", errno: code)), path: path)
            #expect(gone.kind == .forbidden)
            #expect(gone.description.contains("is gone"))
        }
        let refused = DownloadError.symbolicLinkInPath(path)
        #expect(DirectoryHandle.reopenFailure(refused, path: path) == refused)
        // As the job's own failure: a refused folder is 1010 only when the folder's place is
        // the cause; the machine's failure keeps its kind, and its errno reaches the transfer.
        #expect(DownloadError.folderRefused(stage: .goOn, cause: outOfDescriptors).kind == .busy)
        #expect(outOfDescriptors.machineFailure == EMFILE)
        #expect(DownloadError.folderRefused(stage: .goOn, cause: .folderGone(path, cause: .storage(StorageError("x", errno: ENOENT)))).kind == .forbidden)
        #expect(DownloadError.storage(StorageError("x", errno: ENOENT)).machineFailure == nil)
        #expect(refused.machineFailure == nil)
    }

    @Test("openForAppend: a regular file at its end; a symlink, a hard link, a FIFO or a missing file refused")
    func openForAppend() throws {
        let (folder, root, outside) = try makeFolders()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let handle = try DirectoryHandle.open(root, roots: [root], create: false)
        try Data("12345".utf8).write(to: URL(fileURLWithPath: root + "/a.part"))
        let fd = handle.openForAppend("a.part")
        #expect(fd >= 0)
        if fd >= 0 {
            #expect(lseek(fd, 0, SEEK_CUR) == 5)
            close(fd)
        }
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside + "/t"))
        try FileManager.default.createSymbolicLink(atPath: root + "/s.part", withDestinationPath: outside + "/t")
        #expect(handle.openForAppend("s.part") == -ELOOP)
        #expect(link(outside + "/t", root + "/h.part") == 0)
        #expect(handle.openForAppend("h.part") == -ELOOP)
        #expect(mkfifo(root + "/f.part", 0o644) == 0)
        #expect(handle.openForAppend("f.part") < 0)
        #expect(handle.openForAppend("missing.part") == -ENOENT)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: outside + "/t")), as: UTF8.self) == "precious")
    }
}
