import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ImageCacheKit
import Testing

/// The rules of a shared daemon that need no second user to check (docs/protocol.md, "Shared
/// daemons"): who sees a job, who may empty the cache, how a folder's mode is judged for a
/// peer, and that a peer whose credentials were not read gets nothing.
@Suite("Shared daemon rules", .timeLimit(.minutes(1)))
struct PeerRulesTests {
    private static let other: UInt32 = PeerIdentity.daemonUID == 4242 ? 4243 : 4242
    private static let peer = Requester.peer(PeerIdentity(uid: other, gid: 5000, groups: [5001, 5002]))

    @Test("a job is seen by its owner, root and the daemon's uid; an old row without owner is the daemon's")
    func jobVisibility() {
        #expect(Self.peer.maySee(jobOwnedBy: Self.other))
        #expect(!Self.peer.maySee(jobOwnedBy: Self.other + 1))
        #expect(!Self.peer.maySee(jobOwnedBy: nil))
        #expect(Requester.daemon.maySee(jobOwnedBy: nil))
        #expect(Requester.daemon.maySee(jobOwnedBy: Self.other))
        #expect(Requester.peer(PeerIdentity(uid: 0, gid: 0, groups: [])).maySee(jobOwnedBy: Self.other))
    }

    @Test("a stranger (credentials unread) sees nothing, may not clear, may not download")
    func strangerGetsNothing() throws {
        #expect(!Requester.stranger.maySee(jobOwnedBy: nil))
        #expect(!Requester.stranger.maySee(jobOwnedBy: PeerIdentity.daemonUID))
        #expect(!Requester.stranger.mayClearCache(adminGroup: 0))
        #expect(!Requester.stranger.isPrivileged)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("peer-rules-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: DownloadError.unknownPeer) {
            _ = try DownloadDestination.resolveDirectory(folder, roots: [folder], for: .stranger)
        }
        #expect(DownloadError.unknownPeer.kind == .forbidden)
    }

    @Test("overwrite for a peer replaces a file the daemon saved for it only while it is that very file")
    func savedFileByIdentity() throws {
        let folder = try #require(DownloadDestination.realPath(NSTemporaryDirectory())) + "/peer-saved-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/s.jpg", contents: Data("saved".utf8)))
        let handle = try DirectoryHandle.open(folder, roots: [folder], create: false)
        let file = try #require(FileIdentity.look(at: "s.jpg", in: handle.fd)).identity
        #expect(getuid() != Self.other)
        func refusal(_ saved: FileIdentity) -> DownloadError? {
            do {
                try ReplacePolicy(uid: Self.other, saved: [.init(path: folder + "/s.jpg", identity: saved)]).check("s.jpg", in: handle)
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(file) == nil)
        // The same path and inode number, but a file born after the saved one (the saved file
        // deleted, another made there that got its number): not the peer's to replace.
        let reused = FileIdentity(device: file.device, inode: file.inode, born: file.born.map { $0 + 1 },
                                  changed: file.changed.map { $0 + 1 })
        #expect(refusal(reused)?.kind == .forbidden)
        // A finished job of an older table (its inode number alone) vouches for nothing.
        #expect(refusal(FileIdentity(device: nil, inode: file.inode, born: nil, changed: nil))?.kind == .forbidden)
    }

    @Test("cache.clear: root, the daemon's uid, or a member of admin_group by primary or supplementary group")
    func clearRights() {
        #expect(Requester.daemon.mayClearCache(adminGroup: nil))
        #expect(!Self.peer.mayClearCache(adminGroup: nil))
        #expect(!Self.peer.mayClearCache(adminGroup: 6000))
        #expect(Self.peer.mayClearCache(adminGroup: 5002))
        #expect(Self.peer.mayClearCache(adminGroup: 5000))
    }

    @Test("a mode is judged as access(2) does: one class only, owner before group before others")
    func modeJudgement() {
        let identity = PeerIdentity(uid: Self.other, gid: 5000, groups: [5001])
        func info(uid: UInt32, gid: UInt32, mode: mode_t) -> stat {
            var info = stat()
            info.st_uid = uid
            info.st_gid = gid
            info.st_mode = S_IFDIR | mode
            return info
        }
        #expect(identity.may(W_OK | X_OK, info(uid: Self.other, gid: 1, mode: 0o700)))
        // The owner's bits decide for the owner, even when the others' would allow more.
        #expect(!identity.may(W_OK, info(uid: Self.other, gid: 1, mode: 0o577)))
        #expect(identity.may(W_OK | X_OK, info(uid: 1, gid: 5001, mode: 0o770)))
        #expect(!identity.may(W_OK, info(uid: 1, gid: 5001, mode: 0o757)))
        #expect(identity.may(X_OK, info(uid: 1, gid: 2, mode: 0o701)))
        #expect(!identity.may(X_OK, info(uid: 1, gid: 2, mode: 0o770)))
    }

    @Test("a job row that names no owner reads back without one, and only the daemon's uid sees it")
    func oldRowHasNoOwner() throws {
        let json = """
            {"id":"dl-000000000001","url":"http://127.0.0.1:9/a.jpg","variant":"full","state":"finished",
             "reservation":{"directory":"/tmp","stem":"a","ext":"jpg","number":0},
             "defaultName":false,"overwrite":false,"received":3,"tracked":false,"createdAt":0}
            """
        let record = try JSONDecoder().decode(DownloadRecord.self, from: Data(json.utf8))
        #expect(record.owner == nil)
        #expect(!Self.peer.maySee(jobOwnedBy: record.owner))
        #expect(Requester.daemon.maySee(jobOwnedBy: record.owner))
    }
}
