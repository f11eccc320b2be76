import CoreMetrics
import ImageCacheKit
import Prometheus

/// The daemon's Prometheus registry and every figure the metrics endpoint serves.
///
/// One per daemon, owned by `ImageCacheDaemon` and passed down (to the pipeline as a
/// swift-metrics `MetricsFactory`, to the server as a `RequestObserver`), rather than
/// swift-metrics' process-wide `MetricsSystem.bootstrap`: the test suites run dozens of
/// daemons in one process, and a global registry would mix their figures (and can be
/// bootstrapped only once). The `imagecached` executable bootstraps the global system with
/// this same factory, so a library that records through the global API lands in the same
/// scrape.
///
/// Two kinds of figure:
/// - recorded as they happen, through the swift-metrics API: requests by method and outcome
///   with their latency, decode time;
/// - read at scrape time from what the parts already keep for `stats` (cache sizes and
///   per-request outcomes, the transfer engine's counters, providers' quotas, downloads by
///   state, `/proc`): nothing is counted twice, and a figure costs nothing between scrapes.
public final class DaemonMetrics: Sendable {
    /// Where every figure lives; what `GET /metrics` renders.
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics factory over `registry`, with the daemon's histogram buckets.
    public let factory: PrometheusMetricsFactory

    /// Latency buckets for requests and decodes: from a memory hit answered inline (well under
    /// a millisecond) to a slow download.
    static let durationBuckets: [Duration] = [
        .microseconds(250), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
    ]

    private let sources: LockedState<Sources?> = LockedState(nil)
    private let mirrors = LockedState<[String: MirroredCounter]>([:])
    private let gauges = LockedState<[String: Prometheus.Gauge]>([:])
    private let requestSeries = LockedState<[RequestSeriesKey: RequestSeries]>([:])

    /// The parts read at scrape time (attached once the daemon has built them).
    struct Sources: Sendable {
        var services: DaemonServices
        var server: RPCServer
        var search: SearchMethods
        var downloads: DownloadMethods?
    }

    /// A fresh registry, empty until requests arrive and the first scrape reads the parts.
    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        self.registry = registry
        self.factory = factory
    }

    /// Makes this registry the process-wide swift-metrics backend (`MetricsSystem.bootstrap`),
    /// so a library recording through the global API is scraped too. For the `imagecached`
    /// executable only, once per process: tests build many daemons and never call it.
    public func bootstrapProcessWide() {
        MetricsSystem.bootstrap(factory)
    }

    /// Tells the metrics which parts to read at scrape time.
    func attach(_ sources: Sources) {
        self.sources.withLock { $0 = sources }
    }

    // MARK: Recorded as they happen

    /// Counts a request under its method and outcome and records its latency
    /// (`imagecached_requests_total`, `imagecached_request_duration_seconds`).
    ///
    /// Each method's observer is made once (the dispatcher asks when it starts) with its `ok`
    /// pair of metrics made already: a successful request, the common case, records with no
    /// lock and no lookup. Other outcomes' pairs are made on first use and kept
    /// (`requestSeries`): made per request, the registry's name checks, label arrays and
    /// lookups cost a memory hit about 4 % of its CPU. Both labels come from fixed sets (the
    /// router's methods or `unknown`, the error kinds), so the table stays small.
    public var requestObserver: RequestObserver {
        let factory = self.factory
        let series = requestSeries
        let pair: @Sendable (String, String) -> RequestSeries = { method, outcome in
            series.withLock { table -> RequestSeries in
                let key = RequestSeriesKey(method: method, outcome: outcome)
                if let pair = table[key] { return pair }
                let dimensions = [("method", method), ("outcome", outcome)]
                let pair = RequestSeries(
                    count: CoreMetrics.Counter(label: "imagecached_requests_total", dimensions: dimensions, factory: factory),
                    duration: CoreMetrics.Timer(label: "imagecached_request_duration_seconds", dimensions: dimensions, factory: factory))
                table[key] = pair
                return pair
            }
        }
        return { method in
            let ok = pair(method, Answer.ok)
            return { outcome, started in
                let recorded = outcome == Answer.ok ? ok : pair(method, outcome)
                recorded.count.increment()
                recorded.duration.recordInterval(since: started)
            }
        }
    }

    /// A request series' labels.
    private struct RequestSeriesKey: Hashable, Sendable {
        var method: String
        var outcome: String
    }

    /// A request series' two metrics.
    private struct RequestSeries: Sendable {
        var count: CoreMetrics.Counter
        var duration: CoreMetrics.Timer
    }

    // MARK: Read at scrape time

    /// The exposition text (Prometheus text format 0.0.4), every scrape-time figure read now.
    public func scrape() async -> [UInt8] {
        if let sources = sources.withLock({ $0 }) {
            await refresh(from: sources)
        }
        refreshProcess()
        return registry.emitToBuffer()
    }

    private func refresh(from sources: Sources) async {
        let lookups = sources.services.pipeline.lookups.counts
        for outcome in ThumbnailLookups.Outcome.allCases {
            counter("imagecached_thumbnail_requests_total", [("source", outcome.rawValue)],
                    help: "Thumbnail requests by where they were answered: memory, disk, shared (the fleet's memcached tier), network (a fetch they started) or coalesced (a fetch already running on this host)")
                .follow(lookups[outcome])
        }
        for node in sources.services.shared.statistics {
            let labels = [("server", node.server)]
            counter("imagecached_shared_operations_total", labels + [("result", "hit")], help: "Shared-tier (memcached) operations by node and result").follow(node.hits)
            counter("imagecached_shared_operations_total", labels + [("result", "miss")], help: "Shared-tier (memcached) operations by node and result").follow(node.misses)
            counter("imagecached_shared_operations_total", labels + [("result", "error")], help: "Shared-tier (memcached) operations by node and result").follow(node.errors)
            counter("imagecached_shared_ejections_total", labels, help: "Times a shared-tier node was ejected after consecutive failures").follow(node.ejections)
            gauge("imagecached_shared_node_up", labels, help: "1 while a shared-tier node is in use, 0 while it is ejected").set(Int64(node.state == "up" ? 1 : 0))
        }
        let perRequest = "Thumbnail requests by cache tier and result, one outcome per request (a disk lookup happens only after a memory miss)"
        counter("imagecached_cache_requests_total", [("tier", "memory"), ("result", "hit")], help: perRequest).follow(lookups.memoryHits)
        counter("imagecached_cache_requests_total", [("tier", "memory"), ("result", "miss")], help: perRequest).follow(lookups.memoryMisses)
        counter("imagecached_cache_requests_total", [("tier", "disk"), ("result", "hit")], help: perRequest).follow(lookups.diskHits)
        counter("imagecached_cache_requests_total", [("tier", "disk"), ("result", "miss")], help: perRequest).follow(lookups.diskMisses)

        let cache = sources.services.cache.statistics
        for (tier, figures) in [("memory", cache.memory), ("disk", cache.disk)] {
            gauge("imagecached_cache_entries", [("tier", tier)], help: "Entries in the cache tier now").set(Int64(figures.entries))
            gauge("imagecached_cache_bytes", [("tier", tier)], help: "Bytes held by the cache tier now (memory: content plus 256 per entry; disk: content files and their descriptions)")
                .set(Int64(figures.bytes))
            gauge("imagecached_cache_limit_bytes", [("tier", tier)], help: "The tier's limit (memory_limit, disk_limit)").set(Int64(figures.limit))
            counter("imagecached_cache_evictions_total", [("tier", tier)], help: "Entries evicted from the tier to stay under its limit")
                .follow(figures.evictions)
        }

        let network = sources.services.transfers.stats
        counter("imagecached_network_requests_total", [], help: "HTTP requests started (every retry and redirect hop counts)").follow(network.requests)
        counter("imagecached_network_retries_total", [], help: "HTTP requests sent again after a failure").follow(network.retries)
        counter("imagecached_network_received_bytes_total", [], help: "Body bytes received").follow(network.bytesReceived)
        counter("imagecached_network_discarded_bytes_total", [], help: "Body bytes received by transfers that were then cancelled")
            .follow(network.bytesDiscarded)
        counter("imagecached_network_connections_opened_total", [], help: "TCP connections opened by libcurl").follow(network.connectionsOpened)
        gauge("imagecached_transfers_in_flight", [], help: "Transfers running now").set(Int64(network.inFlight))
        gauge("imagecached_transfers_queued", [], help: "Transfers waiting for a connection slot or a retry's backoff now")
            .set(Int64(network.queued))
        gauge("imagecached_transfers_bodies_waiting", [], help: "Fetched thumbnail bodies waiting for their decode now (no prefetch starts while 8 do)")
            .set(Int64(network.unreleasedBodies))

        let pipeline = sources.services.pipeline
        gauge("imagecached_thumbnail_fetches_active", [], help: "Thumbnail fetches running now (each shared by one or more requests)")
            .set(Int64(pipeline.activeFetches))
        let decodes = sources.services.decodes
        gauge("imagecached_decodes_waiting", [], help: "Decodes waiting for the decode budget now").set(Int64(decodes.waiting))
        gauge("imagecached_decode_memory_held_bytes", [], help: "Bytes of the decode budget held by running decodes now")
            .set(Int64(decodes.heldBytes))
        gauge("imagecached_sessions", [], help: "Clients connected now").set(Int64(sources.server.sessionCount))

        for (provider, figures) in sources.search.providerFigures {
            let labels = [("provider", provider)]
            counter("imagecached_provider_requests_total", labels, help: "API requests sent to the provider").follow(figures.requests)
            counter("imagecached_provider_errors_total", labels, help: "API requests to the provider that failed").follow(figures.errors)
            if let remaining = figures.rateLimitRemaining {
                gauge("imagecached_provider_quota_remaining", labels, help: "Requests left in the provider's rate-limit window, as it last reported (absent until it has)")
                    .set(Int64(remaining))
            }
            if let limit = figures.rateLimitLimit {
                gauge("imagecached_provider_quota_limit", labels, help: "The provider's rate-limit window size, as it last reported")
                    .set(Int64(limit))
            }
        }

        if let downloads = sources.downloads {
            var byState: [DownloadState: Int] = [:]
            for job in await downloads.manager.list() { byState[job.state, default: 0] += 1 }
            for state in DownloadState.allCases {
                gauge("imagecached_downloads", [("state", state.rawValue)], help: "Download jobs the daemon holds, by state (finished ones are kept for a day)")
                    .set(Int64(byState[state] ?? 0))
            }
        }
    }

    private func refreshProcess() {
        let process = ProcessFigures.read()
        if let resident = process.residentBytes {
            gauge("process_resident_memory_bytes", [], help: "Resident memory size in bytes").set(Int64(resident))
        }
        if let open = process.openDescriptors {
            gauge("process_open_fds", [], help: "Number of open file descriptors").set(Int64(open))
        }
        if let limit = DescriptorLimit.soft {
            gauge("process_max_fds", [], help: "Maximum number of open file descriptors (the soft limit)").set(Int64(limit))
        }
    }

    private static func key(_ name: String, _ labels: [(String, String)]) -> String {
        ([name] + labels.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{0}")
    }

    private func counter(_ name: String, _ labels: [(String, String)], help: String) -> MirroredCounter {
        mirrors.withLock { mirrors in
            let key = Self.key(name, labels)
            if let existing = mirrors[key] { return existing }
            let descriptor = MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
            let made = MirroredCounter(labels.isEmpty ? registry.makeCounter(descriptor: descriptor)
                                                      : registry.makeCounter(descriptor: descriptor, labels: labels))
            mirrors[key] = made
            return made
        }
    }

    private func gauge(_ name: String, _ labels: [(String, String)], help: String) -> Prometheus.Gauge {
        gauges.withLock { gauges in
            let key = Self.key(name, labels)
            if let existing = gauges[key] { return existing }
            let descriptor = MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
            let made = labels.isEmpty ? registry.makeGauge(descriptor: descriptor)
                                      : registry.makeGauge(descriptor: descriptor, labels: labels)
            gauges[key] = made
            return made
        }
    }
}
