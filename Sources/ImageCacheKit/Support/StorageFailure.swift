#if canImport(Glibc)
import Glibc
#endif
import ImageCacheProtocol

/// The one mapping from a failed file operation's `errno` (on the cache folder, a download
/// folder, a body's spill file) to the contract's error kind (docs/protocol.md, "Errors").
///
/// A full, read-only, unwritable or vanished folder is the machine's state, not a bug, so it
/// is `storage_unavailable` (1013) rather than `internal`; running out of descriptors
/// (EMFILE/ENFILE) is load, which passes, so it is `busy` (1012) like a full queue.
package enum StorageFailure {
    /// The error kind for a file operation that failed with `code`.
    public static func kind(errno code: Int32) -> ErrorKind {
        switch code {
        case EMFILE, ENFILE:
            return .busy
        case ENOSPC, EDQUOT, EROFS, EACCES, EPERM, ENOENT, ENOTDIR, EFBIG, EIO:
            return .storageUnavailable
        default:
            return .internal
        }
    }

    /// An error for `what` (a sentence naming the file) that failed with `code`.
    public static func error(_ what: String, errno code: Int32) -> StorageError {
        StorageError(what, errno: code)
    }
}

/// A file operation that failed (on a download folder, the job table, a body's file): what
/// was done, naming the file, and the system's `errno`, whose kind `StorageFailure` decides.
public struct StorageError: EngineError, Hashable {
    /// The operation and its file, as a sentence (`cannot write /x`).
    public var what: String
    /// The `errno` it failed with.
    public var code: Int32

    /// An error for `what` that failed with `code`.
    public init(_ what: String, errno code: Int32) {
        self.what = what
        self.code = code
    }

    public var kind: ErrorKind { StorageFailure.kind(errno: code) }

    /// `what`, then the system's text for `code`.
    public var description: String { "\(what): \(String(cString: strerror(code)))" }
}
