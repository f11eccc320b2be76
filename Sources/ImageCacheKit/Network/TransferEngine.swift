import Foundation
import ImageCacheConfig
import Logging
import ImageCacheProtocol
import Synchronization

/// The daemon's HTTP client: one libcurl multi handle on one thread, with admission by
/// priority, the URL policy on every hop, limits, retries and real cancellation.
///
/// Use `start(_:events:)` for images and downloads (progress, chunks, cancellation through
/// the handle) and `fetch(_:)` (the `HTTPFetching` seam) for provider API calls. Coalescing
/// many demands for one image into one transfer is the pipeline's job, on top (`ThumbnailFetch`,
/// a `DemandGroup` over one transfer).
/// Call `shutdown()` when done: it cancels what is left and ends the thread.
public final class TransferEngine: HTTPFetching, Sendable {
    /// Tuning that is not part of `cache.conf`: sensible defaults, overridable by tests and
    /// benchmarks.
    public struct Options: Sendable {
        /// Waiting transfers beyond which `start` fails with `busy` (backpressure).
        public var maxQueued = 4096
        /// Bodies larger than this stream to a file in `temporaryDirectory` (unless the request
        /// says `keepInMemory`): a bound on memory per transfer.
        package var memoryBodyLimit = 256 << 10
        /// Where spilled bodies go (`$TMPDIR` by default); the daemon points it inside its cache
        /// directory, whose `tmp/` is emptied when the cache opens, so a crash leaves none behind.
        public var temporaryDirectory = NSTemporaryDirectory().hasSuffix("/")
            ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        /// Retry counts and backoff (see `RetryPolicy`).
        package var retry = RetryPolicy()
        /// Redirect hops followed before `upstream_error` (docs/protocol.md, "Limits": at most 5).
        package var maxRedirects = 5
        /// Slots only visible transfers may use; nil means a quarter of `max_connections`
        /// (at least one when there are two or more).
        package var visibleReserve: Int?
        /// Bodies fetched and not yet processed (`TransferRequest.awaitsRelease`) at which
        /// prefetches stop being admitted until one is released. Visible transfers,
        /// downloads, and a prefetch's retries and redirect hops (their deadline is running)
        /// are never held. Eight keep both cores' decodes fed with a few in hand while the
        /// prefetches already running bring more; on loopback a prefetch of 204 large photos
        /// otherwise had nearly all of them fetched before the fifth decode, each waiting in
        /// a spill file made for it (168–181 files, measured).
        package var prefetchLookAhead = 8
        /// The shortest gap between two progress events of one transfer (≤ 10 per second).
        package var progressInterval: Duration = .milliseconds(100)
        /// libcurl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`): 100 KiB as the curl tool
        /// uses, so a large body costs fewer reads and callbacks; memory is this × max_connections.
        package var receiveBufferSize = 100 << 10
        /// Where retries and failures are logged (at debug level; URLs always redacted).
        public var logger = Logger(label: "imagecached.network")
        /// The defaults described on each property.
        public init() {}
    }

    private let loop: CurlMultiLoop
    private let nextID = Atomic<UInt64>(0)

    /// An engine for a configuration. `policy` defaults to the configuration's own (provider
    /// API and image hosts plus `allowed_hosts`).
    public init(configuration: CacheConfiguration, policy: URLPolicy? = nil, options: Options = Options()) {
        let network = configuration.network
        let environment = TransferEnvironment(configuration: configuration, policy: policy, options: options)
        let maxConnections = max(1, network.maxConnections)
        let reserve = options.visibleReserve ?? (maxConnections >= 2 ? max(1, maxConnections / 4) : 0)
        let limits = TransferScheduler.Limits(maxConnections: maxConnections,
                                              maxPerHost: max(1, network.maxConnectionsPerHost),
                                              visibleReserve: min(reserve, maxConnections - 1),
                                              maxQueued: options.maxQueued,
                                              prefetchLookAhead: max(1, options.prefetchLookAhead))
        loop = CurlMultiLoop(environment: environment, limits: limits)
        loop.startThread()
    }

    deinit {
        loop.commands.send(.shutdown)
    }

    /// Queues a transfer and returns its handle at once; the outcome arrives through the handle.
    /// `events` is called on the curl thread, in order, and must return quickly.
    public func start(_ request: TransferRequest, events: (@Sendable (TransferEvent) -> Void)? = nil) -> TransferHandle {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let handle = TransferHandle(id: id, commands: loop.commands)
        loop.commands.send(.start(request, handle, events))
        return handle
    }

    /// A whole-body GET for provider API calls: any final status is returned (after retries
    /// of 5xx and short 429/503), the body kept in memory; transport failures throw `TransferError`.
    /// Cancelling the calling task cancels the transfer.
    public func fetch(_ request: HTTPRequest) async throws -> HTTPResponse {
        let handle = start(TransferRequest(url: request.url, priority: request.priority, headers: request.headers,
                                           statusHandling: .returnAll, keepInMemory: true))
        let result = try await handle.result()
        guard case .memory(let bytes) = result.body else {
            throw TransferError(.engine("an in-memory body was written to a file"))
        }
        return HTTPResponse(status: result.status, headers: result.headers, body: bytes)
    }

    /// The counters `stats` reports (a consistent snapshot).
    public var stats: NetworkStats {
        loop.environment.stats.value
    }

    /// The counters as they change: a caller that must know "four transfers are queued"
    /// awaits `observedStats.wait { $0.queued == 4 }` instead of polling `stats`.
    package var observedStats: Observed<NetworkStats> { loop.environment.stats }

    /// Takes a reloaded configuration (SIGHUP): its `[network]` limits, timeouts, proxy and
    /// URL policy (allowed hosts, `allow_http`, providers' `api_url` hosts) apply to transfers
    /// queued from now on; running ones finish under the settings they started with. The
    /// connection limits (`max_connections`, `max_connections_per_host`) apply at the next start.
    package func apply(_ configuration: CacheConfiguration) {
        loop.environment.apply(configuration)
    }

    /// Hands back a finished transfer's body the caller is done with, once. A body spilled to
    /// a file (past `Options.memoryBodyLimit`) names one of the engine's spill files, which is
    /// emptied and kept for a later body rather than deleted, so a stream of large bodies does
    /// not make and delete a file each; a body in memory, or a resumed download's own file, is
    /// left as it is. A body that awaited its release (`TransferRequest.awaitsRelease`) lets
    /// one more prefetch start. Emptying a file waits for the file system: call it off the
    /// cooperative pool for a file body.
    public func release(_ result: TransferResult) {
        if case .file(let path, _) = result.body { loop.environment.spillFiles.giveBack(path) }
        if result.awaitsRelease { loop.commands.send(.bodyReleased) }
    }

    /// Cancels every transfer (reason `shutdown`) and ends the curl thread. Further `start`s
    /// fail with `cancelled` at once; spill files not in use are deleted, the rest as they
    /// are released.
    public func shutdown() {
        loop.commands.send(.shutdown)
        loop.environment.spillFiles.close()
    }
}
