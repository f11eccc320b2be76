/// A method's name on the wire; every method the daemon serves (docs/protocol.md, Methods)
/// is spelled once here, in `allCases`.
///
/// The daemon registers its routes under these values (through each method's `RPCMethod`
/// descriptor) and the client sends them, so a typo cannot make the two disagree; a name the
/// daemon's router does not have is `method_not_found`. A struct rather than an enum so that
/// a method outside the contract (a test's, an extension's) can have a descriptor too.
public struct MethodName: RawRepresentable, Sendable, Hashable, Codable, CaseIterable, ExpressibleByStringLiteral,
    CustomStringConvertible {
    /// The name as it is written in a request's `method`.
    public let rawValue: String

    /// Any name; the ones the daemon serves are the static members below.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A name written as a literal (`"test.echo"`), for methods outside the contract.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The wire name, for logs.
    public var description: String { rawValue }

    /// `hello` (`Methods.Hello`).
    public static let hello: MethodName = "hello"
    /// `search` (`Methods.Search`).
    public static let search: MethodName = "search"
    /// `photo.get` (`Methods.PhotoGet`).
    public static let photoGet: MethodName = "photo.get"
    /// `thumbnail.show` (`Methods.ThumbnailShow`).
    public static let thumbnailShow: MethodName = "thumbnail.show"
    /// `thumbnail.recycle` (`Methods.ThumbnailRecycle`).
    public static let thumbnailRecycle: MethodName = "thumbnail.recycle"
    /// `prefetch` (`Methods.Prefetch`).
    public static let prefetch: MethodName = "prefetch"
    /// `prefetch.cancel` (`Methods.PrefetchCancel`).
    public static let prefetchCancel: MethodName = "prefetch.cancel"
    /// `download` (`Methods.Download`).
    public static let download: MethodName = "download"
    /// `download.status` (`Methods.DownloadStatus`).
    public static let downloadStatus: MethodName = "download.status"
    /// `download.list` (`Methods.DownloadList`).
    public static let downloadList: MethodName = "download.list"
    /// `download.cancel` (`Methods.DownloadCancel`).
    public static let downloadCancel: MethodName = "download.cancel"
    /// `download.watch` (`Methods.DownloadWatch`).
    public static let downloadWatch: MethodName = "download.watch"
    /// `layout` (`Methods.Layout`).
    public static let layout: MethodName = "layout"
    /// `stats` (`Methods.Stats`).
    public static let stats: MethodName = "stats"
    /// `cache.evict` (`Methods.CacheEvict`).
    public static let cacheEvict: MethodName = "cache.evict"
    /// `cache.clear` (`Methods.CacheClear`).
    public static let cacheClear: MethodName = "cache.clear"
    /// `cancel` (`Methods.Cancel`).
    public static let cancel: MethodName = "cancel"

    /// Every method of the contract, in the order docs/protocol.md lists them.
    public static let allCases: [MethodName] = [
        hello, search, photoGet, thumbnailShow, thumbnailRecycle, prefetch, prefetchCancel, download, downloadStatus,
        downloadList, downloadCancel, downloadWatch, layout, stats, cacheEvict, cacheClear, cancel,
    ]
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
