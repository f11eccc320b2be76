import ImageCacheProtocol

/// Why the disk cache could not be opened. The daemon prints it and exits: every case
/// names the folder and what to do.
public enum CacheOpenError: Error, Sendable, CustomStringConvertible {
    /// Another process (a second daemon) holds the folder's lock.
    case folderInUse(path: String)
    /// The folder or its lock file cannot be created or opened.
    case fileSystem(CacheFileSystemError)
    /// The index could neither be opened nor rebuilt.
    case index(path: String, reason: String)
    /// Something other than a regular file (`kind`: "a folder", "a symlink"…) stands at one of
    /// the index's paths and could not be moved aside to `aside`; the operator must remove it.
    case inTheWay(path: String, kind: String, aside: String, error: CacheFileSystemError)

    public var description: String {
        switch self {
        case .folderInUse(let path):
            return "cache folder \(path) is in use by another process (its lock is held); "
                + "only one imagecached may use a cache_dir at a time"
        case .fileSystem(let error):
            return "cache folder cannot be used: \(error)"
        case .index(let path, let reason):
            return "cache index \(path) cannot be opened or rebuilt: \(reason)"
        case .inTheWay(let path, let kind, let aside, let error):
            return "\(path) is \(kind), where the cache index must be a file, and it cannot be moved aside to \(aside) "
                + "(\(error)); remove or rename \(path) yourself (the daemon never makes it), then start again"
        }
    }
}

/// Why one write to the disk cache was skipped. Nothing is corrupted when this is thrown:
/// the entry is simply absent from the disk (the memory tier and the network still serve),
/// and the pipeline logs it. Disk full, read-only folders and permission problems arrive as
/// `.fileSystem` with the system's `errno`.
public enum CacheWriteError: EngineError {
    /// A file operation failed (ENOSPC, EROFS, EACCES…).
    case fileSystem(CacheFileSystemError)
    /// The index (SQLite) refused the update.
    case index(String)
    /// The entry alone is larger than the whole disk limit, so it is not stored.
    case tooLarge(bytes: Int, limit: Int)
    /// The cache was closed.
    case closed

    public var description: String {
        switch self {
        case .fileSystem(let error): return "cache write skipped: \(error)"
        case .index(let reason): return "cache write skipped: index update failed: \(reason)"
        case .tooLarge(let bytes, let limit): return "cache write skipped: \(bytes) bytes exceed the disk limit \(limit)"
        case .closed: return "cache write skipped: the cache is closed"
        }
    }

    /// The contract's kind: `storage_unavailable` for a folder that cannot be written (full,
    /// read-only, gone; the index's own writes included), `busy` when out of descriptors
    /// (`StorageFailure`), `internal` for the rest.
    public var kind: ErrorKind {
        switch self {
        case .fileSystem(let error): return StorageFailure.kind(errno: error.code)
        case .index: return .storageUnavailable
        case .tooLarge, .closed: return .internal
        }
    }
}
