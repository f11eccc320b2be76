import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `imagecached` process for a benchmark, with its own `cache.conf`, socket and cache
/// folder inside a temporary folder: what a user runs, so its memory and timing are the
/// product's, not those of a library inside the benchmark.
///
/// Only this process is ever signalled (by its pid), never anything found by name.
final class DaemonProcess {
    let process: Process
    let folder: String
    let socket: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `binary` with a configuration whose sections hold `settings` (lines `key = value`
    /// added to `[daemon]`, `[cache]` and `[network]`), loopback HTTP allowed, its cache in
    /// `folder/cache`, and `environment` added to this process's environment (for allocator
    /// settings such as `MALLOC_ARENA_MAX`). Returns once the socket accepts connections.
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
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--config", folder + "/cache.conf", "--socket", socket]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        _ = FileManager.default.createFile(atPath: folder + "/daemon.log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: folder + "/daemon.log")
        try process.run()
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            if let fd = try? SocketLoad.connect(socket) {
                close(fd)
                break
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                let log = (try? String(contentsOfFile: folder + "/daemon.log", encoding: .utf8)) ?? ""
                throw Failure(description: "imagecached did not start: \(log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    var pid: Int32 { process.processIdentifier }

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

    /// SIGTERM, then waits for the exit; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { kill(pid, SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Stops the daemon and removes its folder.
    func finish() {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
