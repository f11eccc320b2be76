import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheKit
import ProviderSimulator
#if canImport(Glibc)
import Glibc
#endif

/// "An hour under fire": a real `imagecached` with its shared tier on three real memcached
/// nodes and the provider simulator as providers and image host, used by concurrent clients
/// while a fault schedule breaks everything around it (ChaosSchedule), sampled from outside
/// into a CSV, then checked property by property (ChaosVerdict). docs/soak.md explains each
/// bound. Exits non-zero when a property fails.
struct ChaosSoakBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos-soak",
        abstract: "A real imagecached under load and a schedule of faults, sampled into a CSV and checked (docs/soak.md)."
    )

    @Option(help: "The imagecached binary to run.")
    var daemon: String
    @Option(help: "Length of the run in minutes.")
    var minutes = 3.0
    @Option(help: "Folder for the CSV, the events and the summary.")
    var out: String
    @Option(help: "Working folder (socket, configuration, state, downloads).")
    var work: String
    @Option(help: "The cache folder (a small tmpfs of its own for the disk-full fault); default WORK/cache.")
    var cacheDir: String?
    @Option(help: "Fill the cache's filesystem during the disk-full window (only when it is a filesystem of its own).")
    var fill = false
    @Option(help: "Concurrent client connections.")
    var users = 6
    @Option(help: "Milliseconds each user waits between two actions.")
    var thinkMs = 20
    @Option(help: "Seconds between two samples.")
    var sampleSeconds = 5.0
    @Option(help: "Seconds one request may stay unanswered before it counts as hung.")
    var bound = 60.0
    @Option(help: "Length of one fault window in seconds (0: from the run's length).")
    var window = 0.0
    @Option(help: "The two memory_limit values a SIGHUP switches between, in MiB.")
    var memoryLimits = "32,48"
    @Option(help: "KEY=VALUE added to the daemon's environment (repeatable), e.g. TSAN_OPTIONS=….")
    var daemonEnv: [String] = []
    @Flag(help: "Check the properties that need a long run (flatness, latency under faults) even when short.")
    var long = false

    func run() async throws {
        let total = minutes * 60
        let limits = memoryLimits.split(separator: ",").compactMap { Int($0) }
        guard limits.count == 2 else { throw ValidationError("--memory-limits takes two MiB values, e.g. 32,48") }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let cacheDir = cacheDir ?? work + "/cache"
        say("== chaos soak: \(minutes) min, \(users) users, daemon \(daemon); load average \(SoakBenchmark.loadAverage())")

        var nodes: [MemcachedNode] = []
        for _ in 0..<3 {
            let node = MemcachedNode(port: try MemcachedNode.freePort())
            try await node.start()
            nodes.append(node)
        }
        defer { nodes.forEach { $0.kill() } }
        let images = try await ChaosHost { SimulatedImageRoute.handle($0) ?? .text("not found\n", status: 404) }
        let api = ProviderAPISimulator(keys: ProviderAPISimulator.defaultKeys, imageBaseURL: images.baseURL)
        let providers = try await ChaosHost { api.handle($0) ?? .text("not found\n", status: 404) }
        let environment = Dictionary(daemonEnv.compactMap { pair -> (String, String)? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { $1 })
        let settings = ChaosDaemon.Settings(memoryLimits: (limits[0], limits[1]), decodeMemoryMiB: 64, maxConnections: 16,
                                            diskLimit: "48MiB", memcached: nodes.map(\.address),
                                            providerBase: providers.baseURL, environment: environment)
        let process = try ChaosDaemon(binary: daemon, folder: work, cacheDir: cacheDir, settings: settings)
        // Stopped however the run ends (a throw included), so no daemon outlives it and holds
        // the cache's tmpfs; the normal path stops it first and reads its exit status.
        defer { _ = process.stop() }
        try await process.start()
        try await Task.sleep(for: .seconds(1))
        let idle = process.pid.flatMap { ChaosSample.status(pid: $0) }?.rss ?? 0
        say(String(format: "idle RSS %.1f MiB; memcached on %@; providers %@; images %@", Double(idle) / 1024,
                     nodes.map(\.address).joined(separator: ", "), providers.baseURL, images.baseURL))

        let ledger = ChaosLedger()
        let start = ContinuousClock.now
        let schedule = ChaosSchedule(providers: providers, images: images, nodes: nodes, daemon: process, ledger: ledger,
                                     fillPath: fill ? cacheDir + "/zz-chaos-fill" : nil, start: start)
        let csv = out + "/chaos-soak.csv"
        let samples = LockedState<[ChaosSample]>([])
        try (ChaosSample.header + "\n").write(toFile: csv, atomically: true, encoding: .utf8)
        let finished = LockedState(false)
        let memcachedNodes = nodes
        let sampler = Task { [sampleSeconds] in
            guard let csvHandle = FileHandle(forWritingAtPath: csv) else { return }
            defer { try? csvHandle.close() }
            csvHandle.seekToEndOfFile()
            while !finished.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(Int(sampleSeconds * 1000)))
                guard let pid = process.pid, let status = ChaosSample.status(pid: pid) else { continue }
                let files = ChaosSample.cacheFiles(cacheDir)
                let interval = ledger.drainInterval()
                let sample = ChaosSample(
                    seconds: (ContinuousClock.now - start) / .seconds(1), phase: schedule.phase.withLock { $0 },
                    rssKiB: status.rss, memoryLimitMiB: process.memoryLimitMiB, fds: ChaosSample.openFiles(pid: pid), threads: status.threads,
                    diskBytes: files.bytes, diskEntries: files.entries, walBytes: files.wal,
                    jobTableBytes: ChaosSample.fileSize(process.jobTable),
                    memcachedConnections: memcachedNodes.map { node in node.stats().flatMap { Int($0["curr_connections"] ?? "") } ?? -1 },
                    requests: interval.requests, ok: interval.ok, refused: interval.refused,
                    unexplained: interval.unexplained, hung: interval.hung,
                    hitP50: ChaosLedger.quantile(interval.hits, 0.5), hitP99: ChaosLedger.quantile(interval.hits, 0.99))
                samples.withLock { $0.append(sample) }
                csvHandle.write(Data((sample.csv + "\n").utf8))
            }
        }

        let clients = ChaosClients(socket: process.socket, imageBase: images.baseURL, downloads: process.downloads,
                                   ledger: ledger, bound: bound, thinkMilliseconds: thinkMs)
        let stop = LockedState(false)
        let load = Task { await clients.run(users: users, until: { stop.withLock { $0 } }) }
        let recorder = ChaosJobRecorder(socket: process.socket)
        let recording = Task { await recorder.run(until: { finished.withLock { $0 } }) }
        let windowSeconds = window > 0 ? window : min(60, max(6, total / 30))
        await schedule.run(total: total, window: windowSeconds)
        stop.withLock { $0 = true }
        do {
            // Cancelling the wait cancels the clients too: a task awaited from a task group's
            // child is not a child of the group, and the group waits for its children to end.
            try await withDeadline(bound + 30, "the clients' last requests") {
                await withTaskCancellationHandler { await load.value } onCancel: { load.cancel() }
            }
        } catch {
            schedule.event("the clients did not stop within \(Int(bound + 30)) s")
        }
        await schedule.checkAlive()
        finished.withLock { $0 = true }
        _ = await sampler.value
        _ = await recording.value

        let downloads = await DownloadCheck.run(jobs: ledger.state.withLock { $0.downloads }, recorded: recorder.endedJobs,
                                                socket: process.socket, bound: bound * 2)
        let exitStatus = process.stop()
        schedule.event("imagecached stopped with SIGTERM: exit status \(exitStatus)")
        let entries = CacheEntryCheck.run(cacheDir: cacheDir)
        let log = (try? String(contentsOfFile: process.log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: out + "/daemon.log")
        try? FileManager.default.copyItem(atPath: process.log, toPath: out + "/daemon.log")
        await providers.shutdown()
        await images.shutdown()

        let verdict = ChaosVerdict(
            minutes: minutes, long: long || minutes >= 20, samples: samples.withLock { $0 }, ledger: ledger.state.withLock { $0 },
            crashes: schedule.crashes, plannedKills: schedule.plannedKills, exitStatus: exitStatus, downloads: downloads,
            entries: entries, daemonLog: log, idleKiB: idle, settings: settings, users: users, bound: bound,
            providerRequests: providers.counts, imageRequests: images.counts, events: schedule.events)
        let summary = verdict.markdown()
        try summary.write(toFile: out + "/summary.md", atomically: true, encoding: .utf8)
        try schedule.events.joined(separator: "\n").appending("\n").write(toFile: out + "/events.txt", atomically: true, encoding: .utf8)
        say(summary)
        if !verdict.passed { throw ExitCode(1) }
    }
}

/// Prints a line at once, unbuffered even into a log file, so a long run can be followed.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
