/// A group of methods that share what they work over (`CoreMethods`, `SearchMethods`,
/// `ThumbnailMethods`, `PrefetchMethods`, `CacheMethods`, `LayoutMethods`, `DownloadMethods`;
/// docs/architecture.md, "The method families"): the daemon registers its methods
/// from one list of these (`families` in `ImageCacheDaemon.init`), each adding its routes with
/// `RPCRouter.register`.
public protocol MethodFamily: Sendable {
    /// Adds the family's routes (stats sections are registered apart, when the family is built).
    func register(in router: inout RPCRouter)
}
