import Foundation
import Glibc
import ImageCacheSupport
import Testing
import TestSupport
@testable import ImageCacheCLI

/// Runs the real `imagecache` executable built beside this test bundle.
struct CLIProcess: Sendable {
    /// What the run printed and how it ended.
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var binary: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("imagecache").path
    }

    /// Starts `imagecache arguments`; `onLine` sees each stdout and stderr line as it comes (with the
    /// child's pid), so a test can act on an event such as "daemon started". `environment`
    /// replaces the inherited one when given; `stdin` is written to the child's stdin (else it
    /// reads an empty file); with `stderrTerminal` the child's stderr is a pseudo-terminal of
    /// that many columns (what a person sees: bars redrawn in place), read through its master.
    static func run(_ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil,
                    stderrTerminal: Int? = nil,
                    onLine: @escaping @Sendable (String, Int32) -> Void = { _, _ in }) async throws -> Result {
        let terminal = try stderrTerminal.map { try PseudoTerminal(columns: $0) }
        let started = try PipedChild.start(binary, arguments, environment: environment, input: stdin,
                                           stderr: terminal.map { .descriptor($0.secondary) } ?? .pipe)
        // The child has its copy of the terminal's side: without closing ours the reader never
        // sees the end.
        terminal?.closeSecondary()
        let child = started.child
        let pid = child.pid
        let collected = Collected()
        let outDrain = PipeDrain(started.stdout) { chunk in
            for line in collected.appendOut(Data(chunk)) { onLine(line, pid) }
        }
        // Progress and narration are stderr's: a test acts on those lines too. The terminal's
        // side is read through a copy, which the reader closes (the terminal closes its own).
        let errorSource = started.stderr ?? fcntl(terminal!.primary, F_DUPFD_CLOEXEC, 0)
        let errDrain = PipeDrain(errorSource) { chunk in
            for line in collected.appendErr(Data(chunk)) { onLine(line, pid) }
        }
        // A caller's time-out cancels this wait: the child is killed, not left behind.
        guard let status = await child.exit() else {
            child.signal(SIGKILL)
            throw CancellationError()
        }
        // Bounded: should a grandchild still hold the pipes, the output read so far is the answer.
        _ = await (outDrain.text(within: 20), errDrain.text(within: 20))
        withExtendedLifetime(terminal) {}
        return Result(status: status, stdout: collected.stdout, stderr: collected.stderr)
    }
}

/// Output gathered by the reader threads; a lock guards it.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    private var partial = ""
    private var partialErr = ""

    /// Appends stdout bytes and returns the lines completed by them.
    func appendOut(_ data: Data) -> [String] {
        lock.lock(); defer { lock.unlock() }
        out.append(data)
        partial += String(decoding: data, as: UTF8.self)
        var lines = partial.components(separatedBy: "\n")
        partial = lines.removeLast()
        return lines
    }

    /// Appends stderr bytes and returns the lines completed by them.
    func appendErr(_ data: Data) -> [String] {
        lock.lock(); defer { lock.unlock() }
        err.append(data)
        partialErr += String(decoding: data, as: UTF8.self)
        var lines = partialErr.components(separatedBy: "\n")
        partialErr = lines.removeLast()
        return lines
    }

    var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }
}

@Suite("The imagecache executable", .timeLimit(.minutes(2)))
struct BinaryTests {
    @Test func statusWithoutADaemonExits69AndSaysHowToStartIt() async throws {
        let socket = "/tmp/icli-missing-\(UUID().uuidString.prefix(8)).sock"
        let result = try await withTimeout(seconds: 60) { try await CLIProcess.run(["status", "--socket", socket]) }
        #expect(result.status == 69)
        #expect(result.stderr.contains(socket))
        #expect(result.stderr.contains("Start it with `imagecached`"))
    }

    @Test func aUsageErrorExits64() async throws {
        let result = try await withTimeout(seconds: 60) { try await CLIProcess.run(["search", "beach", "--page", "0"]) }
        #expect(result.status == 64)
        #expect(result.stderr.contains("--page must be 1 or more"))
    }

    @Test func theDemoFailsCleanlyWhenTheDaemonExitsAtOnce() async throws {
        let result = try await withTimeout(seconds: 90) {
            try await CLIProcess.run(["demo", "--daemon", "/bin/false", "--svg", "/tmp/icli-unused.svg"])
        }
        #expect(result.status == 1)
        #expect(result.stderr.contains("exited with status 1 before answering"))
        let removed = try #require(result.stdout.split(separator: "\n").first { $0.contains("removed /tmp/imagecache-demo-") })
        let workspace = String(removed.split(separator: " ").last!)
        #expect(!FileManager.default.fileExists(atPath: workspace))
    }

    @Test func ctrlCDuringTheDemoStopsTheDaemonAndRemovesTheWorkspace() async throws {
        // A "daemon" that never answers, so the interrupt always lands while the demo waits.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("icli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fake = dir.appendingPathComponent("imagecached").path
        try "#!/bin/sh\nexec sleep 300\n".write(toFile: fake, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake)

        let result = try await withTimeout(seconds: 90) {
            try await CLIProcess.run(["demo", "--daemon", fake, "--start-timeout", "80"]) { line, pid in
                if line.contains("start imagecached") { kill(pid, SIGINT) }
            }
        }
        #expect(result.status == 130)
        #expect(result.stderr.contains("demo interrupted"))
        let removed = try #require(result.stdout.split(separator: "\n").first { $0.contains("removed /tmp/imagecache-demo-") })
        #expect(!FileManager.default.fileExists(atPath: String(removed.split(separator: " ").last!)))
        #expect(result.stdout.contains("stop imagecached (SIGTERM)"))
        // 128 + 15: the stand-in died of the SIGTERM, so the signal reached it.
        #expect(result.stdout.contains("exited with status 143"))
    }
}
