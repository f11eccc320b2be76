import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit
import ProviderSimulator

/// `imagecache-bench fetch`: the transfer engine alone, bodies to memory, against a list of
/// URLs (Benchmarks/scripts/fetch.sh serves them from a loopback nginx and runs curl and
/// aria2c on the same list, interleaved). `--prepare DIR` writes the image set first.
struct FetchBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch a list of URLs with the libcurl engine (bodies to memory) and report time and CPU.",
        discussion: """
            Run through Benchmarks/scripts/fetch.sh, which starts nginx, writes the URL lists and \
            puts the engine beside curl --parallel and aria2c.

            Examples:
              imagecache-bench fetch --prepare /dev/shm/www
              imagecache-bench fetch --urls small.txt --connections 16
            """
    )

    @Option(help: "Write the image set (small/NNNN.jpg ~30 KB ×2000, large/NNN.jpg ~1 MB ×200) into this folder and exit.")
    var prepare: String?

    @Option(help: "A file with one URL per line to fetch.")
    var urls: String?

    @Option(help: "max_connections and max_connections_per_host of the engine.")
    var connections = 16

    @Option(help: "Small images to write with --prepare.")
    var smallCount = 2000

    @Option(help: "Large images to write with --prepare.")
    var largeCount = 200

    @Option(help: "Where bodies go: memory (every body in memory, the issue's 'engine alone'), file (the daemon's way: past 256 KiB to a file in --work, deleted once counted), pipeline (ImagePipeline.load: fetch, validate by decoding, disk and memory cache write; cache in --work).")
    var mode: Mode = .memory

    @Option(help: "Folder for --mode file and --mode pipeline (emptied first).")
    var work: String?

    @Option(help: "The width asked of the pipeline: images are validated, and scaled only when twice as wide or more.")
    var size = 4096

    @Flag(help: "Leave glibc's malloc as it is instead of applying the daemon's tuning (BodyBufferAllocator).")
    var defaultAllocator = false

    enum Mode: String, ExpressibleByArgument, Sendable {
        case memory, file, pipeline
    }

    /// Synchronous on purpose: `await BenchCommand.main()` in main.swift resolves to the
    /// synchronous entry point, which never calls an async `run()` (it prints the help instead),
    /// so the async work runs in a task this thread waits for.
    func run() throws {
        if let prepare {
            try writeImageSet(into: prepare)
            return
        }
        guard let urls else { throw ValidationError("give --urls FILE or --prepare DIR") }
        let list = try String(contentsOfFile: urls, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        let connections = connections
        let mode = mode
        let size = size
        if mode != .memory {
            guard let work else { throw ValidationError("--mode \(mode.rawValue) needs --work DIR") }
            try? FileManager.default.removeItem(atPath: work)
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        }
        let work = work ?? ""
        // The daemon's own process set-up (ImageCacheDaemonCommand), so that this measures it.
        if !defaultAllocator { BodyBufferAllocator.configure() }
        let outcome = LockedState<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await FetchBenchmark.fetchAll(list, connections: connections, mode: mode, work: work, size: size)
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }?.get()
    }

    private func writeImageSet(into root: String) throws {
        let manager = FileManager.default
        for (folder, count, bytes, variants) in [("small", smallCount, 30_000, 16), ("large", largeCount, 1_000_000, 4)] {
            let dir = root + "/" + folder
            try manager.createDirectory(atPath: dir, withIntermediateDirectories: true)
            // A few distinct real JPEGs, repeated under distinct names (content does not matter
            // to a transfer; encoding 2 200 noise images would dominate the set-up time).
            let images = (0..<variants).map { SyntheticImages.jpeg(approximateBytes: bytes, seed: UInt64($0 + 1)) }
            for index in 0..<count {
                let path = String(format: "%@/%04d.jpg", dir, index)
                try Data(images[index % variants]).write(to: URL(fileURLWithPath: path))
            }
            let sizes = images.map(\.count)
            print("\(folder): \(count) files, \(sizes.min()!)–\(sizes.max()!) bytes each")
        }
    }

    private static func fetchAll(_ list: [String], connections: Int, mode: Mode, work: String, size: Int) async throws {
        var configuration = CacheConfiguration()
        configuration.network.allowHTTP = true
        configuration.network.allowedHosts = ["127.0.0.1"]
        configuration.network.maxConnections = connections
        configuration.network.maxConnectionsPerHost = connections
        var options = TransferEngine.Options()
        options.maxQueued = max(list.count, 1)
        if mode != .memory {
            options.temporaryDirectory = work + "/cache"
            try FileManager.default.createDirectory(atPath: options.temporaryDirectory, withIntermediateDirectories: true)
        }
        let engine = TransferEngine(configuration: configuration, options: options)
        defer { engine.shutdown() }
        var pipeline: ImagePipeline?
        var cache: ImageCache?
        if mode == .pipeline {
            let opened = try ImageCache(configuration: configuration.cache, directory: work + "/cache")
            cache = opened
            let settings = ImagePipeline.Settings(configuration)
            pipeline = ImagePipeline(cache: opened, transfers: engine, registry: PhotoRegistry(),
                                     dimensions: ImageDimensionsStore(),
                                     decodes: DecodeBudget(memory: configuration.network.decodeMemory, slots: ProcessInfo.processInfo.activeProcessorCount),
                                     settings: { settings })
        }
        defer { cache?.close() }

        let cpuBefore = cpuSeconds()
        let started = ContinuousClock.now
        var bytes = 0
        var failures = 0
        var firstError: String?
        if let pipeline {
            // Every demand at once, as a grid of visible slots would ask.
            await withTaskGroup(of: (Int, String?).self) { group in
                for url in list {
                    group.addTask {
                        do {
                            return (try await pipeline.load(ThumbnailRequest(image: .url(url), size: size), events: nil).bytes, nil)
                        } catch {
                            return (0, "\(error)")
                        }
                    }
                }
                for await (count, error) in group {
                    bytes += count
                    if let error {
                        failures += 1
                        firstError = firstError ?? error
                    }
                }
            }
        } else {
            var handles: [TransferHandle?] = list.map { engine.start(TransferRequest(url: $0, keepInMemory: mode == .memory)) }
            for index in handles.indices {
                // Drop each handle (and with it its body) once counted, as a consumer would.
                guard let handle = handles[index] else { continue }
                handles[index] = nil
                do {
                    let result = try await handle.result()
                    bytes += result.body.count
                    engine.release(result)
                } catch {
                    failures += 1
                    firstError = firstError ?? "\(error)"
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        let cpu = cpuSeconds() - cpuBefore
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let stats = engine.stats
        print(String(format: "{\"mode\":\"%@\",\"files\":%d,\"failures\":%d,\"bytes\":%d,\"seconds\":%.4f,\"cpu_seconds\":%.4f,"
                     + "\"files_per_s\":%.1f,\"mb_per_s\":%.1f,\"cpu_us_per_transfer\":%.1f,\"requests\":%d,"
                     + "\"connections\":%d,\"max_rss_mb\":%.1f}",
                     mode.rawValue, list.count, failures, bytes, seconds, cpu, Double(list.count) / seconds,
                     Double(stats.bytesReceived) / seconds / 1e6, cpu / Double(max(list.count, 1)) * 1e6, stats.requests,
                     stats.connectionsOpened, maxRSSMegabytes()))
        if let firstError { FileHandle.standardError.write(Data("first failure: \(firstError)\n".utf8)) }
        if failures > 0 { throw ExitCode(1) }
    }

    /// The process's peak resident set (`ru_maxrss`, kB on Linux), in MB.
    private static func maxRSSMegabytes() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return s(usage.ru_utime) + s(usage.ru_stime)
    }
}
