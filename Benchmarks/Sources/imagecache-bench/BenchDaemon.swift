import DaemonChild
import Foundation

/// A real `imagecached` process for a benchmark, with its own `cache.conf`, socket and cache
/// folder inside a temporary folder: what a user runs, so its memory and timing are the
/// product's, not those of a library inside the benchmark. Started, awaited and stopped by
/// the project's one `DaemonProcess`.
///
/// Only this process is ever signalled (by its pid), never anything found by name.
final class BenchDaemon {
    let process: DaemonProcess
    let folder: String
    let socket: String

    /// Starts `binary` with a configuration whose sections hold `settings` (lines `key = value`
    /// added to `[daemon]`, `[cache]` and `[network]`), loopback HTTP allowed, its cache in
    /// `folder/cache`, its log in `folder/daemon.log`, and `environment` added to this
    /// process's (for allocator settings such as `MALLOC_ARENA_MAX`; API keys withheld).
    /// Returns once the daemon announced it was ready and answered `hello`.
    init(binary: String, folder: String, daemon: [String] = [], cache: [String] = [], network: [String] = [],
         environment: [String: String] = [:]) async throws {
        self.folder = folder
        socket = folder + "/d.sock"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let configuration = (["[daemon]", "log_level = warning"] + daemon
            + ["[cache]", "cache_dir = \(folder)/cache"] + cache
            + ["[network]", "allowed_hosts = 127.0.0.1", "allow_http = true"] + network)
            .joined(separator: "\n") + "\n"
        try configuration.write(toFile: folder + "/cache.conf", atomically: true, encoding: .utf8)
        process = try DaemonProcess(executable: binary, arguments: ["--config", folder + "/cache.conf", "--socket", socket],
                                    environment: DaemonProcess.inheritedEnvironment(adding: environment),
                                    output: .file(path: folder + "/daemon.log"), readiness: .answers(socketPath: socket))
        do {
            await (try process.waitUntilReady(timeout: 60)).close()
        } catch {
            await process.stop()
            throw error
        }
    }

    /// Runs `body` with a daemon started as `init` does, then stops it and removes its folder,
    /// however `body` ends.
    static func run<T>(binary: String, folder: String, daemon: [String] = [], cache: [String] = [], network: [String] = [],
                       environment: [String: String] = [:], _ body: (BenchDaemon) async throws -> T) async throws -> T {
        let started = try await BenchDaemon(binary: binary, folder: folder, daemon: daemon, cache: cache, network: network,
                                            environment: environment)
        do {
            let value = try await body(started)
            await started.finish()
            return value
        } catch {
            await started.finish()
            throw error
        }
    }

    var pid: Int32 { process.pid }

    /// `VmRSS` and `VmHWM` (peak) in KiB, from /proc/PID/status.
    func memory() -> (rss: Int, peak: Int)? { Self.memory(pid: pid) }

    /// The same for any process (a plain value to capture in a sampling task).
    static func memory(pid: Int32) -> (rss: Int, peak: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        }
        guard let rss = field("VmRSS"), let peak = field("VmHWM") else { return nil }
        return (rss, peak)
    }

    /// Stops the daemon (SIGTERM, SIGKILL after 30 s) and removes its folder.
    func finish() async {
        await process.stop(timeout: 30)
        try? FileManager.default.removeItem(atPath: folder)
    }
}
