/// Every method a client may call (docs/protocol.md, "Methods"), spelled once.
///
/// The daemon dispatches on these values and the client sends them, so a typo cannot make
/// the two disagree; an incoming name that is not a case here is `method_not_found`.
public enum MethodName: String, Sendable, Hashable, CaseIterable, Codable {
    case hello
    case search
    case photoGet = "photo.get"
    case thumbnailShow = "thumbnail.show"
    case thumbnailRecycle = "thumbnail.recycle"
    case prefetch
    case prefetchCancel = "prefetch.cancel"
    case download
    case downloadStatus = "download.status"
    case downloadList = "download.list"
    case downloadCancel = "download.cancel"
    case downloadWatch = "download.watch"
    case layout
    case stats
    case cacheEvict = "cache.evict"
    case cacheClear = "cache.clear"
    case cancel
}

/// Every notification the daemon sends (messages without an `id`), spelled once.
///
/// Clients switch on these to route progress to the right progress bar; the daemon builds
/// its notifications from them, so both ends agree on every name.
public enum NotificationName: String, Sendable, Hashable, CaseIterable, Codable {
    case thumbnailProgress = "thumbnail.progress"
    case thumbnailDimensions = "thumbnail.dimensions"
    case prefetchFinished = "prefetch.finished"
    case downloadProgress = "download.progress"
    case downloadFinished = "download.finished"
    case downloadFailed = "download.failed"
}
