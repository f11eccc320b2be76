import ImageCacheConfig
import ImageCacheKit
import Logging

/// Runs `body` with a download manager made as the daemon makes one (a real transfer engine,
/// the job table in `stateDirectory`, `cacheDirectory` where an older daemon kept it), then
/// flushes its table and shuts its engine down, whether `body` returned or threw.
///
/// For the tests that drive the manager itself, below the socket: the job table's migration
/// and retention, an older table's errors, a cancelled run. `start: false` leaves the jobs the
/// table holds unresumed (what the manager knows before its first start).
package func withDownloadManager<Result>(
    cacheDirectory: String, stateDirectory: String? = nil, downloadRoots: [String] = [],
    decodes: DecodeBudget = DecodeBudget(memory: 192 << 20, slots: 1), start: Bool = true,
    observer: @escaping @Sendable (DownloadEvent) -> Void = { _ in },
    _ body: (DownloadManager) async throws -> Result
) async throws -> Result {
    var settings = CacheConfiguration()
    settings.cache.cacheDir = cacheDirectory
    settings.daemon.stateDir = stateDirectory ?? cacheDirectory
    if !downloadRoots.isEmpty { settings.downloads.downloadDir = downloadRoots }
    let configuration = settings
    let engine = TransferEngine(configuration: configuration)
    defer { engine.shutdown() }
    let manager = DownloadManager(dependencies: .init(
        transfers: engine, registry: PhotoRegistry(), decodes: decodes,
        configuration: { configuration }, cacheDirectory: cacheDirectory, logger: Logger(label: "test")), observer: observer)
    if start { await manager.start() }
    return try await finishing(manager, with: { await $0.flush() }, body)
}
