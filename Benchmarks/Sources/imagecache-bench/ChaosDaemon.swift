import DaemonChild
import Foundation
import ImageCacheKit
#if canImport(Glibc)
import Glibc
#endif

/// The chaos soak's `imagecached`: one configuration (socket, state and downloads in `folder`,
/// the cache in `cacheDir`, which may be a small tmpfs), started again after a planned
/// `kill -9` under the same cache and job table, reloaded with SIGHUP after its memory limit is
/// rewritten. Every signal goes to this process by its pid.
final class ChaosDaemon: @unchecked Sendable {
    let binary: String
    let folder: String
    let cacheDir: String
    let settings: Settings
    private let running = LockedState<Process?>(nil)
    private let limit = LockedState(0)
    /// The `memory_limit` the configuration holds now.
    var memoryLimitMiB: Int { limit.withLock { $0 } }

    /// What the configuration holds besides the paths.
    struct Settings {
        var memoryLimits: (Int, Int)
        var decodeMemoryMiB: Int
        var maxConnections: Int
        var diskLimit: String
        var memcached: [String]
        var providerBase: String
        var environment: [String: String]
    }

    init(binary: String, folder: String, cacheDir: String, settings: Settings) throws {
        self.binary = binary
        self.folder = folder
        self.cacheDir = cacheDir
        self.settings = settings
        limit.withLock { $0 = settings.memoryLimits.0 }
        for path in [folder, folder + "/state", folder + "/downloads", cacheDir] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        try writeConfig()
    }

    var socket: String { folder + "/d.sock" }
    var downloads: String { folder + "/downloads" }
    /// The daemon's download job table: the one `jobs-*.json` in its own state folder (its
    /// name is derived from the cache folder's path; no other daemon shares this state folder).
    var jobTable: String {
        let state = folder + "/state"
        let tables = ((try? FileManager.default.contentsOfDirectory(atPath: state)) ?? [])
            .filter { $0.hasPrefix("jobs-") && $0.hasSuffix(".json") }
        return state + "/" + (tables.first ?? "jobs.json")
    }
    var log: String { folder + "/daemon.log" }
    var pid: Int32? { running.withLock { $0.map(\.processIdentifier) } }

    private func writeConfig() throws {
        let api = { (provider: String) in "\(self.settings.providerBase)/\(provider)" }
        let text = """
            [daemon]
            log_level = warning
            state_dir = \(folder)/state
            max_pending_per_session = 1024
            [cache]
            cache_dir = \(cacheDir)
            memory_limit = \(memoryLimitMiB)MiB
            disk_limit = \(settings.diskLimit)
            search_ttl = 20s
            [network]
            allowed_hosts = 127.0.0.1
            allow_http = true
            max_connections = \(settings.maxConnections)
            decode_memory = \(settings.decodeMemoryMiB)MiB
            stall_timeout = 3s
            transfer_timeout = 30s
            connect_timeout = 3s
            [downloads]
            download_dir = \(downloads)
            [shared]
            servers = \(settings.memcached.joined(separator: ", "))
            [providers.unsplash]
            access_key = sim-unsplash-key
            api_url = \(api("unsplash"))
            budget = 0
            [providers.flickr]
            api_key = sim-flickr-key
            api_url = \(api("flickr/services/rest"))
            budget = 0
            [providers.pixabay]
            api_key = sim-pixabay-key
            api_url = \(api("pixabay/api"))
            budget = 0

            """
        try text.write(toFile: folder + "/cache.conf", atomically: true, encoding: .utf8)
    }

    /// Starts the daemon and returns once its socket accepts a connection (at most 60 s).
    func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--config", folder + "/cache.conf", "--socket", socket]
        process.environment = ProcessInfo.processInfo.environment.merging(settings.environment) { $1 }
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let handle = FileHandle(forWritingAtPath: log)
        handle?.seekToEndOfFile()
        process.standardError = handle
        try process.run()
        // The child has its own copy of the descriptor; this one would leak a descriptor of
        // the bench at every restart.
        try? handle?.close()
        running.withLock { $0 = process }
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if let fd = try? SocketLoad.connect(socket) {
                close(fd)
                return
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
                throw DaemonProcess.Failure(description: "imagecached did not start; see \(log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Nil while running; the exit status or signal once it ended (without being waited for).
    var exited: (status: Int32, reason: Process.TerminationReason)? {
        running.withLock { process in
            guard let process, !process.isRunning else { return nil }
            return (process.terminationStatus, process.terminationReason)
        }
    }

    /// `kill -9`: no shutdown path runs, as in a power cut of the process.
    func kill9() {
        guard let process = running.withLock({ $0 }), process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Rewrites the configuration with the other memory limit, then SIGHUP.
    func reloadSwappingMemoryLimit() throws {
        let limits = settings.memoryLimits
        limit.withLock { $0 = $0 == limits.0 ? limits.1 : limits.0 }
        try writeConfig()
        if let pid { kill(pid, SIGHUP) }
    }

    /// SIGTERM and the exit status (bounded: SIGKILL after 30 s).
    func stop() -> Int32 {
        guard let process = running.withLock({ $0 }) else { return 0 }
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return -9
            }
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
