import ImageCacheKit
import Foundation
import Glibc
import TestSupport
import ImageCacheServer

/// The real `imagecached` executable, started as a child process with a clean environment,
/// its stderr read line by line so tests can wait for a log event instead of sleeping.
final class DaemonProcess: Sendable {
    let process: Process
    private let shared = Shared()

    /// What the stderr reader, the termination handler and the tests share.
    private final class Shared: Sendable {
        let lines = LockedState<[String]>([])
        let waiters = LockedState<[(text: String, id: UUID, continuation: CheckedContinuation<Void, Never>)]>([])
        let exit = LockedState<(status: Int32?, waiters: [(id: UUID, continuation: CheckedContinuation<Int32, Never>)])>((nil, []))
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
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let stderr = Pipe().closingOnExec()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        process.terminationHandler = { [shared] process in
            let continuations = shared.exit.withLock { state -> [(id: UUID, continuation: CheckedContinuation<Int32, Never>)] in
                state.status = process.terminationStatus
                defer { state.waiters = [] }
                return state.waiters
            }
            for continuation in continuations { continuation.continuation.resume(returning: process.terminationStatus) }
        }
        let handle = stderr.fileHandleForReading
        let reader = Thread { [shared] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
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
        reader.start()
        try process.runAlone()
    }

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
        Glibc.kill(process.processIdentifier, number)
    }

    /// The exit status, once the process has exited.
    func waitForExit(timeout: Double = 60) async throws -> Int32 {
        // Process has no async API; its termination handler feeds `exit`. Checked with a
        // bounded wait on the handler, never a fixed sleep.
        return try await withTimeout(seconds: timeout) { [shared] in
            let id = UUID()
            return try await withTaskCancellationHandler {
                let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                    let status = shared.exit.withLock { state -> Int32? in
                        if let status = state.status { return status }
                        state.waiters.append((id, continuation))
                        return nil
                    }
                    if let status { continuation.resume(returning: status) }
                }
                try Task.checkCancellation()
                return status
            } onCancel: {
                let mine = shared.exit.withLock { state -> CheckedContinuation<Int32, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                mine?.resume(returning: -1)
            }
        }
    }

    /// Makes sure the process is gone (a failed test must not leave a daemon behind).
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
