import Foundation
import Testing
import TestSupport
@testable import ImageCacheCLI

/// `imagecache` against the real `imagecached` built beside it: only what today's daemon
/// implements (`hello`, `stats`) is asserted, so these hold as more methods land.
@Suite("The imagecache executable against a real imagecached", .timeLimit(.minutes(3)))
struct RealDaemonTests {
    /// A running daemon with its own temporary folder; `stop()` ends it and removes the folder.
    struct RunningDaemon {
        let daemon: DaemonProcess
        let paths: DemoConfig.Paths

        static func start() async throws -> RunningDaemon {
            let executable = try #require(DaemonProcess.locate(argument0: CLIProcess.binary, environment: [:]),
                                          "imagecached is not built next to imagecache")
            let dir = "/tmp/icli-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let paths = DemoConfig.Paths(workspace: dir)
            try DemoConfig.text(paths: paths, simulatorURL: "http://127.0.0.1:9").write(toFile: paths.config, atomically: true, encoding: .utf8)
            let daemon = try DaemonProcess(executable: executable, configPath: paths.config, socketPath: paths.socket, logPath: paths.log)
            let connection = try await daemon.waitUntilReady(timeout: 60)
            await connection.close()
            return RunningDaemon(daemon: daemon, paths: paths)
        }

        func stop() async -> Int32? {
            let status = await daemon.stop()
            try? FileManager.default.removeItem(atPath: paths.workspace)
            return status
        }
    }

    @Test func statusPrintsVersionProtocolAndProviders() async throws {
        let running = try await RunningDaemon.start()
        let result = try await withTimeout(seconds: 60) {
            try await CLIProcess.run(["status", "--socket", running.paths.socket])
        }
        #expect(await running.stop() == 0)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("imagecached "))
        #expect(result.stdout.contains("at \(running.paths.socket), protocol 1"))
        #expect(result.stdout.contains("unsplash  configured"))
    }

    @Test func statsJSONIsTheDaemonsAnswer() async throws {
        let running = try await RunningDaemon.start()
        let result = try await withTimeout(seconds: 60) {
            try await CLIProcess.run(["--socket", running.paths.socket, "stats", "--json"])
        }
        #expect(await running.stop() == 0)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["sessions"] as? Int == 1)
        #expect(object?["uptimeSeconds"] != nil)
    }

    @Test func theDemoRunsItsFrameAndStopsTheDaemonCleanly() async throws {
        let svg = "/tmp/icli-\(UUID().uuidString.prefix(8)).svg"
        defer { try? FileManager.default.removeItem(atPath: svg) }
        let result = try await withTimeout(seconds: 120) { try await CLIProcess.run(["demo", "--json", "--svg", svg]) }
        let report = try JSONDecoder().decode(DemoReport.self, from: Data(result.stdout.utf8))
        #expect(report.daemonStoppedCleanly)
        #expect(report.steps.first?.outcome == "passed")
        #expect(report.steps.last?.outcome == "passed")
        #expect(report.steps.last?.detail.contains("session") == true)
        for step in report.steps where step.outcome == "skipped" {
            #expect(step.detail.contains("not in this build") || step.detail.contains("needs the"), "\(step)")
        }
        let removed = try #require(result.stderr.split(separator: "\n").first { $0.contains("removed /tmp/imagecache-demo-") })
        #expect(!FileManager.default.fileExists(atPath: String(removed.split(separator: " ").last!)))
    }
}
