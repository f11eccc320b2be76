import Foundation
import NIOConcurrencyHelpers
import Testing
import TestSupport
@testable import ImageCacheCLI

/// `imagecache status`, `stats` and `demo` against the real `imagecached` built beside it.
@Suite("The imagecache executable against a real imagecached", .timeLimit(.minutes(3)))
struct RealDaemonTests {
    @Test func statusPrintsVersionProtocolAndProviders() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["status"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("imagecached "))
            #expect(result.stdout.contains("at \(live.socket), protocol 1"))
            #expect(result.stdout.contains("unsplash  configured"))
        }
    }

    @Test func statsJSONIsTheDaemonsAnswer() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["stats", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try jsonObject(result.stdout)
            // This command's own session at least (the readiness probe's may not be gone yet).
            #expect((object["sessions"] as? Int ?? 0) >= 1)
            #expect(object["uptimeSeconds"] != nil)
            for section in ["memory", "disk", "network", "providers"] { #expect(object[section] != nil, "\(section)") }
        }
    }

    @Test func statsTextSummarisesEverySection() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["stats"])
            #expect(result.status == 0, "\(result.stderr)")
            for label in ["uptime", "memory", "disk", "network", "providers", "unsplash"] {
                #expect(result.stdout.contains(label), "\(label)")
            }
        }
    }

    @Test func theDemoPassesEveryStepAndStopsTheDaemonCleanly() async throws {
        let svg = "/tmp/icli-\(UUID().uuidString.prefix(8)).svg"
        defer { try? FileManager.default.removeItem(atPath: svg) }
        let result = try await withTimeout(seconds: 180) { try await CLIProcess.run(["demo", "--json", "--svg", svg]) }
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONDecoder().decode(DemoReport.self, from: Data(result.stdout.utf8))
        #expect(report.daemonStoppedCleanly)
        #expect(report.steps.count == DemoScript.steps.count)
        for step in report.steps { #expect(step.outcome == "passed", "\(step.title): \(step.detail)") }
        let detail = Dictionary(uniqueKeysWithValues: zip(DemoScript.steps.map(\.title), report.steps.map(\.detail)))
        let thumbnails = try #require(detail[DemoScript.thumbnails.title])
        #expect(thumbnails.contains("recycled ") && !thumbnails.contains("recycled 0 of"), "\(thumbnails)")
        #expect(thumbnails.contains("thrown away by the cancelled transfers"))
        // Every slot's bar ends with what became of it: a recycled one says so, none freezes.
        var lastLine: [String: String] = [:]
        for line in result.stderr.split(separator: "\n") where line.hasPrefix("slot ") {
            lastLine[String(line.split(separator: " ")[1])] = String(line)
        }
        #expect(!lastLine.isEmpty, "\(result.stderr)")
        for (slot, line) in lastLine {
            #expect(line.contains(": done ") || line.contains(": recycled "), "slot \(slot) ended with: \(line)")
        }
        #expect(lastLine.values.contains { $0.contains(": recycled ") }, "\(lastLine)")
        #expect(try #require(detail[DemoScript.layout.title]).contains(" decoded, 0 unknown"))
        #expect(try #require(detail[DemoScript.searchAgain.title]).contains("from cache"))
        #expect(try #require(detail[DemoScript.download.title]).contains("1 of 1 saved"))
        #expect(try String(contentsOfFile: svg, encoding: .utf8).contains("<image"))
        let removed = try #require(result.stderr.split(separator: "\n").first { $0.contains("removed /tmp/imagecache-demo-") })
        #expect(!FileManager.default.fileExists(atPath: String(removed.split(separator: " ").last!)))
    }

    @Test func keepRunningLeavesADaemonToTryUntilCtrlC() async throws {
        let svg = "/tmp/icli-\(UUID().uuidString.prefix(8)).svg"
        defer { try? FileManager.default.removeItem(atPath: svg) }
        let (sockets, feed) = AsyncStream.makeStream(of: (String, Int32).self, bufferingPolicy: .bufferingNewest(1))
        // The demo's pid, so a failed or timed-out test still stops it (and so its daemon).
        let demoPID = NIOLockedValueBox<Int32?>(nil)
        let demo = Task {
            try await CLIProcess.run(["demo", "--keep-running", "--svg", svg]) { line, pid in
                demoPID.withLockedValue { $0 = pid }
                if line.contains("imagecache --socket "), let path = line.split(separator: " ").first(where: { $0.hasSuffix(".sock") }) {
                    feed.yield((String(path), pid))
                }
            }
        }
        var finished = false
        defer {
            // Only when the test failed before the demo exited: its pid is not reused yet.
            if !finished, let pid = demoPID.withLockedValue({ $0 }) { kill(pid, SIGINT) }
        }
        let result = try await withTimeout(seconds: 180) { () -> CLIProcess.Result in
            var sandbox: (socket: String, pid: Int32)?
            for await announced in sockets { sandbox = announced; break }
            let (socket, pid) = try #require(sandbox)
            let status = try await CLIProcess.run(["status", "--socket", socket])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(status.stdout.contains("at \(socket)"))
            kill(pid, SIGINT)
            return try await demo.value
        }
        finished = true
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("exited with status 0"))
        let removed = try #require(result.stdout.split(separator: "\n").first { $0.contains("removed /tmp/imagecache-demo-") })
        #expect(!FileManager.default.fileExists(atPath: String(removed.split(separator: " ").last!)))
    }
}
