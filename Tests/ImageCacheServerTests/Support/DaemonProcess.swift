import ImageCacheKit
import Foundation
import Glibc
import TestSupport
import ImageCacheServer
import ImageCacheSupport

/// The real `imagecached` executable, started as a child process with a clean environment,
/// its stderr read line by line so tests can wait for a log event instead of sleeping.
final class DaemonProcess: Sendable {
    let child: ChildProcess
    private let shared = Shared()
    /// The stderr reader: its end (EOF) says every line the process wrote is in `log`.
    private let drain: PipeDrain

    /// What the stderr reader and the tests share.
    private final class Shared: Sendable {
        let lines = LockedState<[String]>([])
        let pending = LockedState<[UInt8]>([])
        let waiters = LockedState<[(text: String, id: UUID, continuation: CheckedContinuation<Void, Never>)]>([])
    }

    /// The built daemon, next to the test bundle (debug, or the TSan scratch path).
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imagecached")
    }

    /// A minimal environment: no API keys, no XDG folders of the machine.
    static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_CACHE_HOME": home + "/cache",
                           "XDG_STATE_HOME": home + "/state"]
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Starts `executable arguments…` (the daemon, or a wrapper such as
    /// `systemd-socket-activate` that execs it).
    init(executable: URL = DaemonProcess.executable, arguments: [String], environment: [String: String]) throws {
        let stderr = try CloseOnExecPipe()
        do {
            child = try ChildProcess(executable.path, arguments: arguments, environment: environment.map { "\($0.key)=\($0.value)" },
                                     stdout: .discard, stderr: .descriptor(stderr.write))
        } catch {
            close(stderr.read)
            close(stderr.write)
            throw error
        }
        close(stderr.write)
        drain = PipeDrain(stderr.read) { [shared] chunk in
            let lines = shared.pending.withLock { pending -> [String] in
                pending += chunk
                var lines: [String] = []
                while let newline = pending.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                return lines
            }
            for line in lines {
                shared.lines.withLock { $0.append(line) }
                let ready = shared.waiters.withLock { waiting -> [CheckedContinuation<Void, Never>] in
                    let matched = waiting.filter { line.contains($0.text) }.map(\.continuation)
                    waiting.removeAll { line.contains($0.text) }
                    return matched
                }
                for continuation in ready { continuation.resume() }
            }
        }
    }

    /// The child's process id.
    var pid: pid_t { child.pid }

    /// Everything the daemon logged so far.
    var log: [String] { shared.lines.withLock { $0 } }

    /// Waits until a log line contains `text` (one already logged counts).
    func waitForLog(_ text: String, timeout: Double = 60) async throws {
        try await withTimeout(seconds: timeout) { [shared] in
            let id = UUID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Register under the lines lock so a line arriving now is not missed.
                    let seen = shared.lines.withLock { lines -> Bool in
                        if lines.contains(where: { $0.contains(text) }) { return true }
                        shared.waiters.withLock { $0.append((text, id, continuation)) }
                        return false
                    }
                    if seen { continuation.resume() }
                }
            } onCancel: {
                // A timed-out wait must end, or the timeout could never fire its error.
                let mine = shared.waiters.withLock { waiting -> CheckedContinuation<Void, Never>? in
                    guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
                    return waiting.remove(at: index).continuation
                }
                mine?.resume()
            }
            try Task.checkCancellation()
        }
    }

    func signal(_ number: Int32) {
        child.signal(number)
    }

    /// The exit status, once the process has exited (at most `timeout` seconds: then
    /// `TimeoutError`) and its stderr has been read to the end (bounded too), so `log` then
    /// holds its last lines: the exit can be seen before the pipe's last bytes are read.
    func waitForExit(timeout: Double = 60) async throws -> Int32 {
        guard let status = await child.exit(within: timeout) else { throw TimeoutError(seconds: timeout) }
        _ = await drain.text(within: 10)
        return status
    }

    /// Makes sure the process is gone (a failed test must not leave a daemon behind).
    func kill() {
        child.signal(SIGKILL)
    }
}
