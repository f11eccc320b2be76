import NIOConcurrencyHelpers
import Foundation
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let input = Pipe()
        process.standardInput = input
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        var terminal: PseudoTerminal?
        if let columns = stderrTerminal {
            let pty = try PseudoTerminal(columns: columns)
            terminal = pty
            process.standardError = FileHandle(fileDescriptor: pty.secondary, closeOnDealloc: false)
        } else {
            process.standardError = err
        }
        let collected = Collected()
        // Plain threads doing blocking reads: FileHandle.readabilityHandler's dispatch
        // sources crash libdispatch on Linux when the pipe closes under them.
        let outFD = out.fileHandleForReading.fileDescriptor
        let errFD = err.fileHandleForReading.fileDescriptor
        // Close-on-exec for our copies, so a process another test spawns meanwhile (a daemon
        // that outlives its test) cannot inherit the write ends and keep the readers from
        // ever seeing the end of the output. The child's own stdout/stderr are dup2'd copies.
        for fd in [outFD, errFD, out.fileHandleForWriting.fileDescriptor, err.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        let pid = PIDBox()
        let readers = DispatchGroup()
        readers.enter()
        // Each reader keeps its pipe alive until it returns: were the descriptor closed under
        // a blocked `read`, its number could be reused by another test's file meanwhile.
        Thread { [out] in
            defer { withExtendedLifetime(out) {} }
            readChunks(outFD) { chunk in
                // Output means the child runs, and `run()` sets the pid as soon as it returns:
                // wait for that, so `onLine` never gets 0 (kill(0, …) would hit the test runner).
                while pid.value.withLockedValue({ $0 }) == 0 { sched_yield() }
                for line in collected.appendOut(chunk) { onLine(line, pid.value.withLockedValue { $0 }) }
            }
            readers.leave()
        }.start()
        readers.enter()
        let errorSource = terminal?.primary ?? errFD
        Thread { [err, terminal] in
            defer { withExtendedLifetime((err, terminal)) {} }
            readChunks(errorSource) { chunk in
                // Progress and narration are stderr's: a test acts on those lines too.
                while pid.value.withLockedValue({ $0 }) == 0 { sched_yield() }
                for line in collected.appendErr(chunk) { onLine(line, pid.value.withLockedValue { $0 }) }
            }
            readers.leave()
        }.start()
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.runAlone()
                pid.value.withLockedValue { $0 = process.processIdentifier }
                // The child has its copy: without closing ours the primary never sees the end.
                terminal?.closeSecondary()
                if let stdin { try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8)) }
                try? input.fileHandleForWriting.close()
            } catch { continuation.resume(throwing: error) }
        }
        try? out.fileHandleForWriting.close()
        try? err.fileHandleForWriting.close()
        // Bounded: should a grandchild still hold the pipes, the output read so far is the answer.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumed = NIOLockedValueBox(false)
            let resumeOnce: @Sendable () -> Void = {
                if !resumed.withLockedValue({ let was = $0; $0 = true; return was }) { continuation.resume() }
            }
            readers.notify(queue: .global(), execute: resumeOnce)
            DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: resumeOnce)
        }
        return Result(status: status, stdout: collected.stdout, stderr: collected.stderr)
    }
}

/// Reads `fd` to its end, handing each chunk over as it arrives; blocks the calling thread.
func readChunks(_ fd: Int32, _ body: (Data) -> Void) {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        if count <= 0 { return }
        body(Data(buffer[0..<count]))
    }
}

/// The child's pid, set after it starts and read by the reader thread.
final class PIDBox: Sendable {
    let value = NIOLockedValueBox<Int32>(0)
}

/// Output gathered from pipe callbacks on Foundation's threads; a lock guards it.
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
