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
public enum StorageFailure {
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
    public static func error(_ what: String, errno code: Int32) -> RPCError {
        RPCError(kind(errno: code), "\(what): \(String(cString: strerror(code)))")
    }
}
