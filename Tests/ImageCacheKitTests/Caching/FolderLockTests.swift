import Foundation
@testable import ImageCacheKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The folder lock's patience: a lock released while it retries is taken, one held past
/// its patience is refused as `folderInUse`.
@Suite("Folder lock", .timeLimit(.minutes(1)))
struct FolderLockTests {
    /// Opens `path` and holds an exclusive flock on it (a second open file description, as
    /// another process or a forked child would have).
    private func hold(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd
    }

    /// Runs `body` on a thread of its own (the lock's retries sleep; never on the cooperative pool).
    private func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test("a lock released while the second opener retries is taken, after at least one refusal")
    func takenAfterRelease() async throws {
        let folder = TemporaryFolder("lock")
        defer { folder.remove() }
        let path = folder.path + "/lock"
        let held = try hold(path)
        let refusals = Observed(0)
        let outcome: Result<Int, CacheOpenError> = await onThread { () -> Result<Int, CacheOpenError> in
            do throws(CacheOpenError) {
                let lock = try FolderLock(lockFile: path, folder: folder.path) {
                    // Release our hold at the first refusal: the next retry must succeed.
                    if refusals.value == 0 { close(held) }
                    refusals.update { $0 += 1 }
                }
                lock.release()
                return .success(refusals.value)
            } catch {
                return .failure(error)
            }
        }
        let refused = try outcome.get()
        #expect(refused >= 1)
    }

    @Test("a lock still held after the patience is refused as folderInUse, naming the folder")
    func refusedWhenHeld() async throws {
        let folder = TemporaryFolder("lock")
        defer { folder.remove() }
        let path = folder.path + "/lock"
        let held = try hold(path)
        defer { close(held) }
        let outcome: CacheOpenError? = await onThread { () -> CacheOpenError? in
            do throws(CacheOpenError) {
                try FolderLock(lockFile: path, folder: folder.path).release()
                return nil
            } catch {
                return error
            }
        }
        guard case .folderInUse(let named)? = outcome else {
            Issue.record("expected folderInUse, got \(String(describing: outcome))")
            return
        }
        #expect(named == folder.path)
    }

    @Test("a symlink at the lock's name is refused, and nothing is made where it points")
    func symlinkRefused() throws {
        let folder = TemporaryFolder("lock")
        defer { folder.remove() }
        let path = folder.path + "/lock"
        let target = folder.path + "/elsewhere"
        #expect(symlink(target, path) == 0)
        #expect {
            try FolderLock(lockFile: path, folder: folder.path).release()
        } throws: { error in
            guard case .fileSystem(let failure) = error as? CacheOpenError else { return false }
            return failure.code == ELOOP && failure.path == path
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
