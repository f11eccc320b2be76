import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheKit
import ProviderSimulator
#if canImport(Glibc)
import Glibc
#endif

/// A memory soak through a real `imagecached` process: `count` distinct thumbnails (each a
/// fetch, a decode, a scale, an encode and a cache write) with a small `memory_limit`, the
/// daemon's RSS sampled from /proc/PID/status all along. The contract's bound is
/// `memory_limit` + a documented overhead that does not grow with load; the target
/// is RSS ≤ memory_limit + idle RSS + 32 MiB, flat over the last half.
///
/// Before the soak it measures the two terms of the memory formula (docs/operating.md) that are not the limit:
/// the RSS one idle connection adds (`--probe-connections` of them, each having said hello)
/// and the peak one decode adds (a large JPEG shown once, on a fresh daemon, read from VmHWM).
struct SoakBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "RSS of a real imagecached over thousands of distinct thumbnails with a small memory_limit."
    )

    @Option(help: "The imagecached binary to run (a release build).")
    var daemon: String
    @Option(help: "Distinct thumbnails to make.")
    var count = 10_000
    @Option(help: "memory_limit of the daemon.")
    var memoryLimit = "64MiB"
    @Option(help: "The limit in MiB, for the target line (must match --memory-limit).")
    var memoryLimitMiB = 64
    @Option(help: "Client connections.")
    var connections = 4
    @Option(help: "Slots in flight per connection.")
    var depth = 8
    @Option(help: "Thumbnail width asked for.")
    var size = 256
    @Option(help: "Distinct source images (the URLs are all distinct; bodies repeat).")
    var bodies = 24
    @Option(help: "Milliseconds between two RSS samples.")
    var sampleMs = 250
    @Option(help: "KEY=VALUE added to the daemon's environment (repeatable), e.g. MALLOC_ARENA_MAX=2.")
    var daemonEnv: [String] = []
    @Option(help: "Idle connections opened to measure the per-connection cost (0: skip).")
    var probeConnections = 256
    @Option(help: "Side lengths (WxH) of the JPEGs decoded once each to measure the per-decode cost (empty: skip).")
    var probeDecodes: [String] = ["4000x3000", "8000x5000"]
    @Option(help: "Folder for the daemon's socket and cache (on disk: the cache grows to a few hundred MB).")
    var folder = "/var/tmp"

    struct Sample {
        var seconds: Double
        var done: Int
        var rss: Int
        var peak: Int
    }

    private var environment: [String: String] {
        Dictionary(daemonEnv.compactMap { pair -> (String, String)? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { $1 })
    }

    func run() async throws {
        let server = try await ImageServer.start()
        let envText = daemonEnv.isEmpty ? "(none)" : daemonEnv.joined(separator: " ")
        print("== soak: \(count) distinct \(size)-px thumbnails, memory_limit = \(memoryLimit), \(connections) connections × \(depth) slots;"
              + " daemon environment \(envText); load average \(Self.loadAverage())")
        if !probeDecodes.allSatisfy(\.isEmpty) { try await probeDecodeCost(server: server) }

        // Sources: `bodies` distinct photos-like JPEGs, 640 to 2400 px wide, 3:2.
        var images: [[UInt8]] = []
        for index in 0..<bodies {
            let width = 640 + (2400 - 640) * index / max(1, bodies - 1)
            images.append(SyntheticImages.jpeg(width: width, height: width * 2 / 3, seed: UInt64(100 + index)))
        }
        for index in 0..<count { server.serve("/soak/\(index).jpg", body: images[index % bodies]) }
        print("sources: \(bodies) JPEGs, \(images.map(\.count).min()!)–\(images.map(\.count).max()!) bytes, 640–2400 px wide")

        try await BenchDaemon.run(binary: daemon, folder: folder + "/soak-bench-\(getpid())",
                                  daemon: ["max_pending_per_session = 4096"],
                                  cache: ["memory_limit = \(memoryLimit)", "disk_limit = 4GiB"],
                                  environment: environment) { process in
            try await Task.sleep(for: .seconds(1))
            guard let idle = process.memory() else { throw ValidationError("cannot read the daemon's /proc status") }
            print(String(format: "idle RSS: %.1f MiB (VmHWM %.1f MiB)", Double(idle.rss) / 1024, Double(idle.peak) / 1024))
            if probeConnections > 0 { try probeConnectionCost(process) }

            let done = LockedState(0)
            let next = LockedState(0)
            let failures = LockedState<[String]>([])
            let delivered = LockedState(0)
            let samples = LockedState<[Sample]>([])
            let start = ContinuousClock.now
            let sampler = Task { [sampleMs, pid = process.pid] in
                while !Task.isCancelled {
                    if let memory = BenchDaemon.memory(pid: pid) {
                        let sample = Sample(seconds: (ContinuousClock.now - start) / .seconds(1), done: done.withLock { $0 },
                                            rss: memory.rss, peak: memory.peak)
                        samples.withLock { $0.append(sample) }
                    }
                    try? await Task.sleep(for: .milliseconds(sampleMs))
                }
            }
            let clients = try await (0..<connections).asyncMap { _ in try await ImageCacheConnection.connect(to: process.socket) }
            try await withDeadline(3600, "the soak") { [count, depth, size] in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in clients {
                        for lane in 0..<depth {
                            group.addTask {
                                while true {
                                    let index = next.withLock { value -> Int in defer { value += 1 }; return value }
                                    guard index < count else { return }
                                    do {
                                        let result = try await client.showThumbnail(
                                            ThumbnailShowParams(slot: lane, image: .url(server.url("/soak/\(index).jpg")), size: size))
                                        delivered.withLock { $0 += result.bytes }
                                    } catch {
                                        failures.withLock { $0.append("\(index): \(error)") }
                                    }
                                    done.withLock { $0 += 1 }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let elapsed = (ContinuousClock.now - start) / .seconds(1)
            let memoryStats: StatsResult.Cache?
            do {
                memoryStats = try await clients[0].stats().memory
            } catch {
                print("stats failed: \(error)")
                memoryStats = nil
            }
            for client in clients { await client.close() }
            try await Task.sleep(for: .seconds(2))
            sampler.cancel()
            _ = await sampler.value
            let after = process.memory()

            let all = samples.withLock { $0 }
            let failed = failures.withLock { $0 }
            print(String(format: "made %d thumbnails in %.1f s (%.0f/s), %d failed", count, elapsed, Double(count) / elapsed, failed.count))
            if let first = failed.first { print("first failure: \(first)") }
            let thumbnailBytes = delivered.withLock { $0 }
            print(String(format: "thumbnails delivered: %.1f MiB in all, %.1f KiB each on average (memory_limit holds about %d of them)",
                         Double(thumbnailBytes) / 1_048_576, Double(thumbnailBytes) / Double(max(1, count)) / 1024,
                         Int(Double(memoryLimitMiB << 20) / max(1, Double(thumbnailBytes) / Double(max(1, count))))))
            if let memoryStats {
                print("daemon stats after: memory tier \(memoryStats.entries) entries, \(memoryStats.bytes) bytes, limit \(memoryStats.limit)")
            }
            print("RSS over the soak (MiB):")
            var printed = -1
            for sample in all where sample.done * 20 / max(1, count) > printed || sample.done == count {
                printed = sample.done * 20 / max(1, count)
                print(String(format: "  %6.1f s  %5d done  RSS %6.1f  VmHWM %6.1f", sample.seconds, sample.done,
                             Double(sample.rss) / 1024, Double(sample.peak) / 1024))
                if sample.done == count { break }
            }
            let during = all.filter { $0.done < count }
            let maxRSS = during.map(\.rss).max() ?? 0
            let target = (memoryLimitMiB + 32) * 1024 + idle.rss
            print(String(format: "max RSS during the soak: %.1f MiB; target ≤ %d + idle %.1f + 32 = %.1f MiB: %@",
                         Double(maxRSS) / 1024, memoryLimitMiB, Double(idle.rss) / 1024, Double(target) / 1024,
                         maxRSS <= target ? "met" : "NOT met"))
            let lastHalf = during.filter { $0.done >= count / 2 }
            if lastHalf.count >= 2 {
                let slope = Self.slope(lastHalf.map { (Double($0.done), Double($0.rss)) })  // KiB per thumbnail
                let low = lastHalf.map(\.rss).min()!, high = lastHalf.map(\.rss).max()!
                print(String(format: "last half: RSS %.1f–%.1f MiB (spread %.1f MiB), trend %+.2f MiB per 1000 thumbnails (%+.1f MiB over the half)",
                             Double(low) / 1024, Double(high) / 1024, Double(high - low) / 1024,
                             slope * 1000 / 1024, slope * Double(count / 2) / 1024))
            }
            if let after {
                print(String(format: "RSS 2 s after the last answer, connections closed: %.1f MiB (VmHWM %.1f MiB)",
                             Double(after.rss) / 1024, Double(after.peak) / 1024))
            }
            await server.shutdown()
        }
    }

    /// Least-squares slope of y over x.
    static func slope(_ points: [(Double, Double)]) -> Double {
        let n = Double(points.count)
        let meanX = points.map(\.0).reduce(0, +) / n, meanY = points.map(\.1).reduce(0, +) / n
        let numerator = points.map { ($0.0 - meanX) * ($0.1 - meanY) }.reduce(0, +)
        let denominator = points.map { ($0.0 - meanX) * ($0.0 - meanX) }.reduce(0, +)
        return denominator == 0 ? 0 : numerator / denominator
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// RSS per idle connection: `probeConnections` sockets, each having completed a `hello`.
    private func probeConnectionCost(_ process: BenchDaemon) throws {
        guard let before = process.memory() else { return }
        var descriptors: [CInt] = []
        defer { descriptors.forEach { close($0) } }
        let hello = Array(#"{"jsonrpc":"2.0","id":0,"method":"hello"}"#.utf8) + [0x0A]
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<probeConnections {
            let fd = try SocketLoad.connect(process.socket)
            descriptors.append(fd)
            _ = hello.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            var line: [UInt8] = []
            while !line.contains(0x0A) {
                let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard got > 0 else { throw ValidationError("the daemon closed a probe connection") }
                line += buffer[0..<got]
            }
        }
        Thread.sleep(forTimeInterval: 0.5)
        guard let after = process.memory() else { return }
        print(String(format: "per connection: %d idle connections (after hello) added %.1f MiB RSS = %.1f KiB each",
                     probeConnections, Double(after.rss - before.rss) / 1024, Double(after.rss - before.rss) / Double(probeConnections)))
    }

    /// Peak RSS one decode adds: each probe image shown once on a fresh daemon (so nothing
    /// before it has raised VmHWM), from the idle peak to the peak after the answer.
    private func probeDecodeCost(server: ImageServer) async throws {
        for (number, text) in probeDecodes.filter({ !$0.isEmpty }).enumerated() {
            let sides = text.split(separator: "x").compactMap { Int($0) }
            guard sides.count == 2 else { throw ValidationError("--probe-decodes takes WxH, not \(text)") }
            let image = SyntheticImages.jpeg(width: sides[0], height: sides[1], seed: 7)
            let path = "/decode/\(number).jpg"
            server.serve(path, body: image)
            try await BenchDaemon.run(binary: daemon, folder: folder + "/soak-decode-\(getpid())-\(number)",
                                      cache: ["memory_limit = \(memoryLimit)"], environment: environment) { process in
                try await Task.sleep(for: .milliseconds(500))
                guard let before = process.memory() else { return }
                let client = try await ImageCacheConnection.connect(to: process.socket)
                let result = try await client.showThumbnail(ThumbnailShowParams(slot: 0, image: .url(server.url(path)), size: size))
                await client.close()
                guard let after = process.memory() else { return }
                let added = after.peak - before.peak
                print(String(format: "per decode: %@ JPEG (%.1f MB body, %.0f MP) → %dx%d: VmHWM %.1f → %.1f MiB, +%.1f MiB (%.2f bytes per pixel)",
                             text, Double(image.count) / 1e6, Double(sides[0] * sides[1]) / 1e6, result.width, result.height,
                             Double(before.peak) / 1024, Double(after.peak) / 1024, Double(added) / 1024,
                             Double(added * 1024) / Double(sides[0] * sides[1])))
            }
        }
    }
}

extension Sequence {
    /// `map` with an async transform, in order, one element at a time.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
