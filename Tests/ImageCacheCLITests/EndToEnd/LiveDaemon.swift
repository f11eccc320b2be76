import DaemonChild
import Foundation
import ImageCacheClient
import ProviderSimulator
import Testing
import TestSupport
@testable import ImageCacheCLI

/// A real `imagecached` (the one built beside `imagecache`), spawned with the demo's config
/// against the demo's loopback simulator (provider APIs and paced images), plus an image server of the test's own for URL
/// downloads with faults (`.held`). `stop()` ends it and removes its folder.
struct LiveDaemon {
    let daemon: DaemonProcess
    let paths: DemoConfig.Paths
    let simulator: DemoSimulator
    let images: ImageServer

    var socket: String { paths.socket }
    var downloads: String { paths.downloads }

    static func start() async throws -> LiveDaemon {
        let executable = try #require(DaemonProcess.locate(argument0: CLIProcess.binary, environment: [:]),
                                      "imagecached is not built next to imagecache")
        let dir = "/tmp/icli-\(UUID().uuidString.prefix(8))"
        let paths = DemoConfig.Paths(workspace: dir)
        try FileManager.default.createDirectory(atPath: paths.downloads, withIntermediateDirectories: true)
        let simulator = try await DemoSimulator.start(timeout: 60)
        let images = try await ImageServer.start()
        // The demo's config, with stall and transfer deadlines beyond any test's limit: a test
        // that holds a download open (`.held`) ends it itself, and under load the default
        // 15 s stall_timeout could time it out first (as the daemon harness once did).
        let config = DemoConfig.text(paths: paths, simulatorURL: simulator.baseURL)
            .replacingOccurrences(of: "[network]\n", with: "[network]\nstall_timeout = 600s\ntransfer_timeout = 900s\n")
        #expect(config.contains("stall_timeout = 600s"))
        try config.write(toFile: paths.config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(executable: executable, configPath: paths.config, socketPath: paths.socket, logPath: paths.log)
        let connection = try await daemon.waitUntilReady(timeout: 60)
        await connection.close()
        return LiveDaemon(daemon: daemon, paths: paths, simulator: simulator, images: images)
    }

    /// Runs `imagecache ARGS --socket SOCKET` (see `CLIProcess.run` for the rest).
    func cli(_ arguments: [String], stdin: String? = nil, stderrTerminal: Int? = nil,
             onLine: @escaping @Sendable (String, Int32) -> Void = { _, _ in }) async throws -> CLIProcess.Result {
        try await withTimeout(seconds: 90) {
            try await CLIProcess.run(arguments + ["--socket", socket], stdin: stdin, stderrTerminal: stderrTerminal, onLine: onLine)
        }
    }

    /// Runs `imagecache ARGS` with no `--socket`, in `environment` alone.
    func cliFinding(_ arguments: [String], environment: [String: String]) async throws -> CLIProcess.Result {
        try await withTimeout(seconds: 90) { try await CLIProcess.run(arguments, environment: environment) }
    }

    /// A session of the test's own, for checking what the daemon holds.
    func connect() async throws -> ImageCacheConnection {
        try await ImageCacheConnection.connect(to: socket)
    }

    /// The photos of the first page of `query`, as the CLI's `search --json` printed them.
    func photoIDs(_ query: String = "mountain lake") async throws -> [String] {
        let result = try await cli(["search", query, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return ((object?["photos"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
    }

    /// Files in the download root.
    func downloadedFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).sorted()
    }

    /// Stops the daemon (its exit status: 0 when it stopped cleanly) and removes everything.
    func stop() async -> Int32? {
        let status = await daemon.stop()
        await images.shutdown()
        await simulator.shutdown()
        try? FileManager.default.removeItem(atPath: paths.workspace)
        return status
    }

    /// Runs `body` with a live daemon, stopping it whatever happens and checking it exited 0.
    static func with(_ body: (LiveDaemon) async throws -> Void) async throws {
        let live = try await start()
        do {
            try await body(live)
        } catch {
            Issue.record("daemon log:\n\(live.daemon.logTail(lines: 30))")
            _ = await live.stop()
            throw error
        }
        let status = await live.stop()
        #expect(status == 0, "imagecached did not stop cleanly")
    }
}

/// Parses the CLI's `--json` output.
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
}

/// Parses the CLI's `--json` output that is an array of objects.
func jsonArray(_ text: String) throws -> [[String: Any]] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]], "not a JSON array: \(text)")
}
