import Foundation
@testable import ImageCacheKit
import Testing

/// Which file a name leads to, on real files: what `statx` reports, and the rules that decide
/// whether a file seen now is the one recorded.
@Suite("Downloads: a file's identity", .timeLimit(.minutes(1)))
struct FileIdentityTests {
    private func makeFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "/icid-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("a file is seen with its device, inode and one generation marker, and confirms itself")
    func looksAtAFile() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/f", contents: Data("abc".utf8)))
        let fd = open(folder, O_DIRECTORY | O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0)
        defer { close(fd) }
        let look = try #require(FileIdentity.look(at: "f", in: fd))
        var info = stat()
        #expect(lstat(folder + "/f", &info) == 0)
        #expect(look.identity.device == UInt64(info.st_dev), "the device as stat(2) numbers it")
        #expect(look.identity.inode == UInt64(info.st_ino))
        #expect((look.identity.born == nil) != (look.identity.changed == nil), "a birth time, else the change time")
        #expect(look.isRegular && look.size == 3 && look.links == 1)
        #expect(look.identity.confirms(look.identity))
        #expect(FileIdentity.look(at: "missing", in: fd) == nil)
        #expect(FileIdentity.look(at: "", in: fd) == nil, "an empty name is not the folder itself")
        // Through a descriptor: the same file.
        let file = open(folder + "/f", O_RDONLY | O_CLOEXEC)
        defer { close(file) }
        #expect(FileIdentity.look(fd: file)?.identity == look.identity)
    }

    @Test("a symbolic link is seen itself, never its target")
    func symlinkItself() throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/target", contents: Data("x".utf8)))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/target")
        let link = try #require(FileIdentity.look(at: folder + "/link", in: AT_FDCWD))
        let target = try #require(FileIdentity.look(at: folder + "/target", in: AT_FDCWD))
        #expect(link.type == S_IFLNK && !link.isRegular)
        #expect(!link.identity.confirms(target.identity))
    }

    @Test("confirming: the same device, inode and birth time; the change time only where no birth time is kept")
    func confirmation() {
        let born = FileIdentity(device: 7, inode: 42, born: 1_000, changed: nil)
        #expect(born.confirms(born))
        #expect(!born.confirms(FileIdentity(device: 7, inode: 42, born: 1_001, changed: nil)), "a reused inode number")
        #expect(!born.confirms(FileIdentity(device: 8, inode: 42, born: 1_000, changed: nil)), "another file system")
        #expect(!born.confirms(FileIdentity(device: 7, inode: 43, born: 1_000, changed: nil)))
        let changed = FileIdentity(device: 7, inode: 42, born: nil, changed: 5_000)
        #expect(changed.confirms(changed))
        #expect(!changed.confirms(FileIdentity(device: 7, inode: 42, born: nil, changed: 5_001)))
        #expect(!changed.confirms(FileIdentity(device: 7, inode: 42, born: 5_000, changed: nil)))
        // An older record: an inode number and nothing else confirms nothing, not even its own number.
        let bare = FileIdentity(device: nil, inode: 42, born: nil, changed: nil)
        #expect(!bare.confirms(bare))
        #expect(!bare.confirms(born))
        #expect(!FileIdentity(device: 7, inode: 42, born: nil, changed: nil).confirms(born))
    }

    @Test("a folder is the same folder by device, inode and birth time, whatever its change time")
    func sameFolder() {
        let folder = FileIdentity(device: 7, inode: 42, born: 1_000, changed: nil)
        #expect(folder.isSameFolder(folder))
        #expect(!folder.isSameFolder(FileIdentity(device: 7, inode: 42, born: 2_000, changed: nil)), "removed and made again")
        #expect(!folder.isSameFolder(FileIdentity(device: 7, inode: 43, born: 1_000, changed: nil)))
        let unborn = FileIdentity(device: 7, inode: 42, born: nil, changed: 5_000)
        #expect(unborn.isSameFolder(FileIdentity(device: 7, inode: 42, born: nil, changed: 9_000)), "entries made in it")
    }
}
