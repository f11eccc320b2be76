import ImageCacheProtocol

/// Why the pipeline itself (not Imaging, not a transfer) could not deliver a thumbnail: the
/// facts, which the server's wire mapping turns into `not_found` or the cache write's kind.
public enum PipelineError: EngineError {
    /// A photo id the daemon never returned (`not_found`).
    case unknownPhoto(id: String)
    /// The thumbnail was made but could not be stored: the cache's own account, whose kind
    /// this takes (`storage_unavailable`, `busy`, `internal`); nil when the cache gave no path
    /// and no reason.
    case cacheWriteFailed(CacheWriteError?)

    public var kind: ErrorKind {
        switch self {
        case .unknownPhoto: return .notFound
        case .cacheWriteFailed(let error): return error?.kind ?? .internal
        }
    }

    /// The message for a person.
    public var description: String {
        switch self {
        case .unknownPhoto(let id): return "unknown photo id \(id): search for it first"
        case .cacheWriteFailed(let error):
            return "the thumbnail could not be written to the cache folder (\(error.map { "\($0)" } ?? "no path"))"
        }
    }
}
