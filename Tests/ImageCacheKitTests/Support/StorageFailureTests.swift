import Glibc
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing

/// The one errno → error kind table of file operations.
@Suite("Storage failures map to their kinds", .timeLimit(.minutes(1)))
struct StorageFailureTests {
    @Test("full, read-only, refused or gone is storage_unavailable; out of descriptors is busy; the rest internal",
          arguments: [
              (ENOSPC, ErrorKind.storageUnavailable), (EDQUOT, .storageUnavailable), (EROFS, .storageUnavailable),
              (EACCES, .storageUnavailable), (EPERM, .storageUnavailable), (ENOENT, .storageUnavailable),
              (ENOTDIR, .storageUnavailable), (EIO, .storageUnavailable), (EMFILE, .busy), (ENFILE, .busy),
              (EINVAL, .internal), (EBADF, .internal),
          ])
    func kinds(code: Int32, kind: ErrorKind) {
        #expect(StorageFailure.kind(errno: code) == kind)
        let error = wire(StorageFailure.error("cannot write /x", errno: code))
        #expect(error.kind == kind && error.code == kind.code)
        #expect(error.message.hasPrefix("cannot write /x: "))
    }

    @Test("a cache write that failed on the file system carries the same kind")
    func cacheWrite() {
        let full = CacheWriteError.fileSystem(CacheFileSystemError(operation: "write", path: "/c/x", code: ENOSPC))
        #expect(wire(full).kind == .storageUnavailable && wire(full).code == 1013)
        let descriptors = CacheWriteError.fileSystem(CacheFileSystemError(operation: "open", path: "/c/x", code: EMFILE))
        #expect(wire(descriptors).kind == .busy)
        #expect(wire(CacheWriteError.closed).kind == .internal)
    }
}
