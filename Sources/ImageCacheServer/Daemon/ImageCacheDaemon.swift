#if canImport(Glibc)
import Glibc
#endif
import ImageCacheConfig
import ImageCacheKit
import ImageCacheSupport
import Logging
import NIOPosix
import ServiceLifecycle

/// The daemon as a whole: socket, server, methods, systemd integration, signals.
///
/// `main` builds one from the parsed configuration and calls `run()`, which returns when the
/// daemon has stopped after SIGTERM/SIGINT, or the end of stdin with `Options.watchStdin`
/// (the process then exits 0), and throws when it
/// cannot start (socket in use, bad group…; the process prints the error and exits non-zero).
///
/// Later features register their methods and stats sections on `router` / `stats` before
/// `run()`.
public final class ImageCacheDaemon: Sendable {
    /// What the command line adds to the configuration.
    public struct Options: Sendable {
        /// `--socket`: wins over `socket =` in cache.conf, and survives reloads.
        public var socketPath: String?
        /// The process environment, for default paths and `NOTIFY_SOCKET`.
        public var environment: [String: String]
        /// Reads the configuration again for SIGHUP (the same file and rules as at start).
        /// nil: SIGHUP is logged and ignored.
        public var reload: (@Sendable () throws -> CacheConfiguration)?
        /// The process-wide log level to update when `log_level` changes on reload.
        public var logLevel: LogLevelControl?
        /// How long in-flight requests may run after SIGTERM before they are abandoned.
        public var shutdownGracePeriod: Duration
        /// A socket inherited from systemd, if `main` already took it; otherwise `run()`
        /// looks for one itself.
        public var inheritedSocket: ListeningSocket?
        /// `--watch-stdin`: the end of stdin stops the daemon as SIGTERM does
        /// (`StdinLifeline`), for a parent that holds a pipe open there while it lives.
        public var watchStdin: Bool

        /// Defaults: no overrides, an empty environment (no systemd notification), no reload,
        /// ten seconds of grace on shutdown, stdin not watched.
        public init(socketPath: String? = nil, environment: [String: String] = [:],
                    reload: (@Sendable () throws -> CacheConfiguration)? = nil, logLevel: LogLevelControl? = nil,
                    shutdownGracePeriod: Duration = .seconds(10), inheritedSocket: ListeningSocket? = nil,
                    watchStdin: Bool = false) {
            self.socketPath = socketPath
            self.environment = environment
            self.reload = reload
            self.logLevel = logLevel
            self.shutdownGracePeriod = shutdownGracePeriod
            self.inheritedSocket = inheritedSocket
            self.watchStdin = watchStdin
        }
    }

    /// The running configuration (replaced on a successful reload).
    public let configuration: ConfigurationStore
    /// The `stats` sections; features add theirs.
    public let stats = StatsRegistry()
    /// The server (available for its metrics; started by `run()`).
    public let server: RPCServer
    /// `search` and `photo.get`: the providers, their page cache and photo registry.
    public let search: SearchMethods
    /// The download jobs: their table is flushed at a clean stop.
    private let downloads: DownloadMethods
    /// The engine parts the method families share (transfers, cache, registry, dimensions);
    /// shut down with the daemon.
    public let services: DaemonServices
    /// This daemon's Prometheus registry: what `metrics_listen` serves (`DaemonMetrics` says
    /// why it is per daemon rather than global).
    public let metrics: DaemonMetrics
    /// The metrics endpoint while it serves (nil when `metrics_listen` is empty).
    private let metricsEndpoint = LockedState<MetricsEndpoint?>(nil)

    private let options: Options
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let startTime = ContinuousClock.now
    /// Where the daemon serves, for the status line (set once it listens).
    private let servingPlace = LockedState("")
    /// The daemon's own event loops, sized by `EventLoopSizing` (CPU affinity aware).
    private let eventLoops: MultiThreadedEventLoopGroup
    private let eventLoopCount: Int

    /// - Parameters:
    ///   - configuration: the validated configuration.
    ///   - logger: where every event goes.
    ///   - options: what the command line adds.
    ///   - extend: registers further methods (later features) beside `hello`/`stats`/`cancel`.
    /// - Throws: `DaemonStartError.cacheUnavailable` when `cache_dir` is another daemon's or
    ///   cannot be opened; `.unknownAdminGroup` when `admin_group` names no group.
    public init(configuration: CacheConfiguration, logger: Logger, options: Options = Options(),
                extend: (inout RPCRouter, StatsRegistry) -> Void = { _, _ in }) throws(DaemonStartError) {
        // Before anything starts: a group that names nobody is a mistake in the file.
        if let name = configuration.daemon.adminGroup, CacheMethods.adminGroupID(name) == nil {
            throw .unknownAdminGroup(name)
        }
        let store = ConfigurationStore(configuration)
        self.configuration = store
        self.options = options
        self.logger = logger
        self.notifier = SystemdNotifier(environment: options.environment)
        let stats = self.stats
        let metrics = DaemonMetrics()
        self.metrics = metrics
        let services = try DaemonServices(configuration: store, logger: logger, metrics: metrics.factory)
        self.services = services
        let searchMethods = SearchMethods.forDaemon(services: services)
        searchMethods.registerStats(stats)
        search = searchMethods
        let downloads = DownloadMethods(services: services)
        self.downloads = downloads
        // Every method the daemon serves, by family.
        let thumbnails = ThumbnailMethods(services: services)
        let families: [any MethodFamily] = [
            CoreMethods(configuration: store, stats: stats),
            searchMethods,
            thumbnails,
            PrefetchMethods(services: services, sessions: thumbnails.sessions),
            CacheMethods(services: services, stats: stats, search: searchMethods),
            LayoutMethods(services: services),
            downloads,
        ]
        // After CacheMethods, whose `shared` part it completes.
        searchMethods.registerFleetStats(stats)
        var router = RPCRouter()
        for family in families { family.register(in: &router) }
        extend(&router, stats)
        eventLoopCount = EventLoopSizing.threadCount
        eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: eventLoopCount)
        server = RPCServer(router: router, limits: { store.limits }, logger: logger, group: eventLoops,
                           observer: metrics.requestObserver)
        let server = self.server
        metrics.attach(.init(services: services, server: server, search: searchMethods, downloads: downloads))
        let startTime = self.startTime
        stats.register("daemon") { result in
            result.sessions = server.sessionCount
            result.uptimeSeconds = Int((ContinuousClock.now - startTime).components.seconds)
        }
    }

    /// The socket path this daemon binds when not socket-activated: `--socket`, else
    /// `socket =`, else the contract's default (`resolvedSocketPath`).
    public var socketPath: String {
        options.socketPath ?? configuration.current.resolvedSocketPath
    }

    /// Binds (or inherits) the socket, serves until SIGTERM/SIGINT (or stdin's end with
    /// `Options.watchStdin`), then stops cleanly.
    ///
    /// - Throws: `DaemonStartError` when it cannot start serving.
    public func run() async throws {
        let hangups = HangupSignals()
        defer { hangups.stop() }
        // The socket is taken and served from inside the group, after the group has trapped
        // SIGTERM/SIGINT: a SIGTERM sent the moment the daemon answers (or reports READY)
        // then always means a graceful stop, never death by the default signal action.
        let service = ServingService(daemon: self)
        let reloader = ReloadService(daemon: self, hangups: hangups)
        let cache = services.cache
        let trimmer = HeapTrimService(trimmer: HeapTrimmer(activity: HeapTrimmer.turnover(of: cache, decodes: services.decodes)))
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [
                .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: reloader, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore),
                .init(service: trimmer, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore),
            // Last: the group asks services to stop in reverse order, so this one is asked
            // first and its return during a stop is the one awaited, not a failure.
            ] + (options.watchStdin
                ? [.init(service: StdinLifelineService(logger: logger), successTerminationBehavior: .gracefullyShutdownGroup,
                         failureTerminationBehavior: .gracefullyShutdownGroup)]
                : []),
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }

    /// Where the metrics endpoint listens now (nil when `metrics_listen` is empty or before
    /// `start`), with the port the kernel chose when the configuration said 0.
    public var metricsAddress: MetricsListenAddress? {
        metricsEndpoint.withLock { $0 }?.boundAddress
    }

    /// Takes the systemd socket or binds our own, starts the server, reports READY.
    func start() async throws -> ListeningSocket {
        let listener: ListeningSocket
        if let inherited = try options.inheritedSocket ?? SocketActivation.takeInheritedSocket() {
            listener = inherited
            logger.info("using the socket passed by systemd", metadata: ["socket": "\(inherited.path ?? "fd 3")"])
        } else {
            let path = socketPath
            listener = try SocketBinder.bind(path: path, group: configuration.current.daemon.socketGroup, logger: logger)
        }
        do {
            try await server.start(on: listener)
            if let address = configuration.current.daemon.metricsListen {
                let endpoint = try await MetricsEndpoint.start(address, metrics: metrics, group: eventLoops, logger: logger)
                metricsEndpoint.withLock { $0 = endpoint }
            }
        } catch {
            await server.shutdown(gracePeriod: .zero)
            listener.removeSocketFile()
            listener.releaseLock()
            throw error
        }
        listener.releaseLock()
        let place = listener.path ?? "the socket passed by systemd"
        servingPlace.withLock { $0 = place }
        logger.notice("serving", metadata: [
            "socket": "\(place)", "pid": "\(getpid())", "version": "\(ImageCacheVersion.current)", "eventLoops": "\(eventLoopCount)",
        ])
        logStartup(configuration.current)
        notifier.ready(status: "Serving on \(place)")
        return listener
    }

    /// The start-up line an operator reads first: which file, where the cache, its download
    /// job table (in `state_dir`, one per cache folder) and the download roots are, which providers have a key (and where each came from, never the
    /// key itself); a warning when none has, since every search would then fail.
    private func logStartup(_ configuration: CacheConfiguration) {
        let providers: [(String, CacheConfiguration.Provider)] = [
            ("unsplash", configuration.unsplash), ("flickr", configuration.flickr), ("pixabay", configuration.pixabay),
        ]
        let keyed = providers.filter { $0.1.isConfigured }
        logger.notice("configuration", metadata: [
            "file": "\(configuration.sourcePath ?? "none (defaults)")",
            "cache_dir": "\(configuration.resolvedCacheDirectory)",
            "job_table": "\(services.jobStore?.path ?? "none (state_dir \(configuration.resolvedStateDirectory) cannot be used)")",
            "download_roots": "\(configuration.resolvedDownloadRoots.joined(separator: ","))",
            "providers_with_keys": "\(keyed.isEmpty ? "none" : keyed.map { "\($0.0)(\($0.1.apiKeySource.map { "\($0)" } ?? "set"))" }.joined(separator: ","))",
        ])
        if keyed.isEmpty {
            logger.warning("no provider has an API key: every search answers provider_unavailable; set UNSPLASH_ACCESS_KEY, FLICKR_API_KEY or PIXABAY_API_KEY (environment, /etc/credstore/ or cache.conf)")
        }
    }

    /// Starts the systemd heartbeat (`WATCHDOG=1`, live `STATUS=`) on one of the daemon's loops.
    func startHeartbeat(place: String) -> SystemdHeartbeat {
        SystemdHeartbeat(notifier: notifier, environment: options.environment, loop: eventLoops.next()) { [self] in
            statusLine(place: place)
        }
    }

    /// What `systemctl status` shows while serving: where, and the figures an operator looks
    /// at first (sessions, the memory tier, the network).
    func statusLine(place: String) -> String {
        let memory = services.cache.statistics.memory
        let network = services.transfers.stats
        let sessions = server.sessionCount
        return "Serving on \(place): \(sessions) session\(sessions == 1 ? "" : "s"), "
            + "\(memory.entries) cached in memory (\(memory.bytes / (1 << 20)) MiB), "
            + "\(network.inFlight) transfer\(network.inFlight == 1 ? "" : "s") running, \(network.queued) queued"
    }

    /// Stops accepting, lets in-flight requests finish within the grace period, removes the
    /// socket file if it is ours.
    func stop(listener: ListeningSocket) async {
        logger.notice("shutting down", metadata: ["sessions": "\(server.sessionCount)"])
        notifier.stopping(status: "Shutting down")
        await server.shutdown(gracePeriod: options.shutdownGracePeriod)
        // Job states reach the table a few milliseconds after they change (a finished job's
        // notice does not wait for it): a clean stop writes what is still pending, so the next
        // start neither resumes a job that had finished, failed or been cancelled.
        await downloads.manager.flush()
        await metricsEndpoint.withLock({ $0 })?.close()
        await services.shared.shutdown()
        services.shutdown()
        listener.removeSocketFile()
        try? await eventLoops.shutdownGracefully()
        logger.notice("stopped")
    }

    /// Re-reads the configuration (SIGHUP). A bad file is reported and the running
    /// configuration kept; a good one replaces it: limits, keys, log level and `[network]`
    /// (for transfers queued from then on) apply at once, while the socket path and group and
    /// the engine's connection counts only apply at the next start (the socket's are logged).
    ///
    /// - Returns: whether the new configuration was applied.
    @discardableResult
    public func reloadConfiguration() -> Bool {
        guard let reload = options.reload else {
            logger.notice("SIGHUP received, but this daemon has no configuration file to reload")
            return false
        }
        notifier.reloading(status: "Reloading configuration")
        // The status keeps naming the socket (the heartbeat refreshes the figures).
        defer { notifier.notify(["READY=1", "STATUS=\(statusLine(place: servingPlace.withLock { $0 }))"]) }
        let fresh: CacheConfiguration
        do {
            fresh = try reload()
        } catch {
            logger.error("configuration reload failed; keeping the running configuration", metadata: ["reason": "\(error)"])
            return false
        }
        if let name = fresh.daemon.adminGroup, CacheMethods.adminGroupID(name) == nil {
            logger.error("configuration reload failed; keeping the running configuration",
                         metadata: ["reason": "\(DaemonStartError.unknownAdminGroup(name))"])
            return false
        }
        let previous = configuration.replace(with: fresh)
        services.apply(fresh)
        options.logLevel?.level = fresh.daemon.logLevel
        if previous.daemon.socket != fresh.daemon.socket || previous.daemon.socketGroup != fresh.daemon.socketGroup {
            logger.notice("the socket path and socket_group apply at the next start, not on reload")
        }
        if previous.daemon.metricsListen != fresh.daemon.metricsListen {
            logger.notice("metrics_listen applies at the next start, not on reload")
        }
        let changed = fresh.changedKeys(from: previous)
        logger.notice("configuration reloaded", metadata: [
            "file": "\(fresh.sourcePath ?? "defaults")",
            "changed": "\(changed.isEmpty ? "no changes" : changed.joined(separator: ", "))",
        ])
        return true
    }
}

/// Starts serving, serves until graceful shutdown, then stops the daemon.
private struct ServingService: Service {
    let daemon: ImageCacheDaemon

    func run() async throws {
        let listener = try await daemon.start()
        let heartbeat = daemon.startHeartbeat(place: listener.path ?? "the socket passed by systemd")
        // Returns on SIGTERM/SIGINT (graceful shutdown) or throws on cancellation; both stop.
        try? await gracefulShutdown()
        heartbeat.stop()
        await daemon.stop(listener: listener)
    }
}

/// With `--watch-stdin`: once stdin ends (the parent holding it is gone), returns, and the
/// group stops gracefully, as on SIGTERM; returns too when the group stops for another reason.
private struct StdinLifelineService: Service {
    let logger: Logger

    func run() async throws {
        for await _ in StdinLifeline.ended().cancelOnGracefulShutdown() {
            logger.notice("stdin ended (--watch-stdin): stopping as on SIGTERM")
        }
    }
}

/// Reloads the configuration on each SIGHUP until shutdown.
private struct ReloadService: Service {
    let daemon: ImageCacheDaemon
    let hangups: HangupSignals

    func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            // Reading the file and evicting down to a smaller disk_limit wait for the disk.
            let daemon = daemon
            _ = await BlockingIO.run { daemon.reloadConfiguration() }
        }
    }
}

/// Gives free heap pages back once a second while the memory tier turns over or decodes end
/// (`HeapTrimmer` says why), until shutdown.
private struct HeapTrimService: Service {
    let trimmer: HeapTrimmer

    func run() async throws {
        await cancelWhenGracefulShutdown { await trimmer.run(every: .seconds(1)) }
    }
}
