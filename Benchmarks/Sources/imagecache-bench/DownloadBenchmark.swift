import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheConfig
import ImageCacheKit
import ImageCacheServer
import Logging
import ProviderSimulator

/// `imagecache-bench download`: the daemon's `download` method end to end — a real
/// `ImageCacheDaemon` in this process on a real socket, a client submitting every URL, each
/// job streamed to `<name>.part`, fsynced, verified by decoding, and renamed — timed from the
/// first submission to the last `download.finished`. Benchmarks/scripts/download.sh serves
/// the photos from a loopback nginx and runs `curl -Z` and `aria2c -j 16` on the same list
/// into the same disk, interleaved.
struct DownloadBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Save a list of image URLs through the daemon's download method and report throughput.",
        discussion: """
            Run through Benchmarks/scripts/download.sh, which starts nginx and puts the daemon \
            beside curl -Z and aria2c -j 16.

            Examples:
              imagecache-bench download --prepare /dev/shm/www
              imagecache-bench download --urls photos.txt --out /tmp/out --connections 16
            """
    )

    @Option(help: "Write the photo set (NN.jpg, ~5 MB decodable JPEGs) into this folder and exit.")
    var prepare: String?

    @Option(help: "How many photos --prepare writes.")
    var count = 20

    @Option(help: "Approximate size of each photo --prepare writes, in bytes.")
    var bytes = 5_000_000

    @Option(help: "A file with one URL per line to save.")
    var urls: String?

    @Option(help: "The download root the daemon saves into (emptied by the script between runs).")
    var out: String?

    @Option(help: "max_connections and max_connections_per_host of the daemon's engine.")
    var connections = 16

    /// Synchronous on purpose (see FetchBenchmark.run): the async work runs in a task this
    /// thread waits for.
    func run() throws {
        if let prepare {
            try writePhotos(into: prepare)
            return
        }
        guard let urls, let out else { throw ValidationError("give --urls FILE and --out DIR, or --prepare DIR") }
        let list = try String(contentsOfFile: urls, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        let connections = connections
        let outcome = LockedState<Result<String, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let report = try await DownloadBenchmark.saveAll(list, into: out, connections: connections)
                outcome.withLock { $0 = .success(report) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        let report = try outcome.withLock { $0 }!.get()
        print(report)
        if ProcessInfo.processInfo.environment["BENCH_VERBOSE"] != nil {
            FileHandle.standardError.write(Data("exiting at \(Date().timeIntervalSince1970)\n".utf8))
        }
        // The daemon runs until SIGTERM; the measurement is over, so the process simply ends.
        Foundation.exit(0)
    }

    private func writePhotos(into root: String) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var sizes: [Int] = []
        for index in 0..<count {
            let photo = SyntheticImages.jpeg(approximateBytes: bytes, seed: UInt64(index + 1))
            sizes.append(photo.count)
            try Data(photo).write(to: URL(fileURLWithPath: String(format: "%@/%02d.jpg", root, index)))
        }
        print("\(count) photos, \(sizes.min()!)–\(sizes.max()!) bytes each, \(sizes.reduce(0, +)) in all")
    }

    private static func saveAll(_ urls: [String], into out: String, connections: Int) async throws -> String {
        let work = NSTemporaryDirectory() + "/imagecache-bench-download-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        var configuration = CacheConfiguration()
        configuration.daemon.socket = work + "/d.sock"
        configuration.cache.cacheDir = work + "/cache"
        // Its own job table, not the user's state folder: no run resumes another run's jobs.
        configuration.daemon.stateDir = work + "/state"
        configuration.downloads.downloadDir = [out]
        configuration.network.allowedHosts = ["127.0.0.1"]
        configuration.network.allowHTTP = true
        configuration.network.maxConnections = connections
        configuration.network.maxConnectionsPerHost = connections
        configuration.network.maxImageBytes = 64 << 20
        let verbose = ProcessInfo.processInfo.environment["BENCH_VERBOSE"] != nil
        let t0 = ContinuousClock.now
        func phase(_ name: String) {
            if verbose { FileHandle.standardError.write(Data("\(name): \(ContinuousClock.now - t0) at \(Date().timeIntervalSince1970)\n".utf8)) }
        }
        let log = FinishLatencyLog(minimum: verbose ? .info : .error)
        var logger = Logger(label: "imagecache-bench", factory: { _ in log })
        logger.logLevel = .info  // the "download finished" lines carry afterLastByteMs
        let daemon = try ImageCacheDaemon(configuration: configuration, logger: logger)
        Task { try await daemon.run() }
        phase("daemon built")
        let connection = try await connectWhenServing(daemon.socketPath)
        phase("connected")
        let notifications = connection.notifications()

        let cpuBefore = cpuSeconds()
        let start = ContinuousClock.now
        var jobs = Set<String>()
        for url in urls {
            jobs.insert(try await connection.download(DownloadParams(image: .url(url))).job)
        }
        phase("submitted")
        var saved = 0
        var failures: [String] = []
        for await notification in notifications {
            switch notification {
            case .downloadFinished(let finished) where jobs.contains(finished.job):
                jobs.remove(finished.job)
                saved += finished.bytes
            case .downloadFailed(let failed) where jobs.contains(failed.job):
                jobs.remove(failed.job)
                failures.append(failed.error.message)
            default:
                break
            }
            if jobs.isEmpty { break }
        }
        let elapsed = ContinuousClock.now - start
        phase("finished")
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = cpuSeconds() - cpuBefore
        guard failures.isEmpty else { throw ValidationError("\(failures.count) downloads failed: \(failures[0])") }
        let latencies = log.values.sorted()
        let p50 = latencies.isEmpty ? -1 : latencies[latencies.count / 2]
        let p90 = latencies.isEmpty ? -1 : latencies[min(latencies.count - 1, latencies.count * 9 / 10)]
        return String(format: "{\"files\":%d,\"bytes\":%d,\"seconds\":%.4f,\"cpu_seconds\":%.4f,\"mb_per_s\":%.1f,"
                      + "\"last_byte_to_finished_ms_p50\":%.2f,\"last_byte_to_finished_ms_p90\":%.2f}",
                      urls.count, saved, seconds, cpu, Double(saved) / seconds / 1e6, p50, p90)
    }

    /// Connects once the daemon answers on its socket (it binds from its own task).
    private static func connectWhenServing(_ socket: String) async throws -> ImageCacheConnection {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await ImageCacheConnection.connect(to: socket)
            } catch {
                if ContinuousClock.now > deadline { throw error }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
