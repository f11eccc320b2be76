import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program started by `ChildSpawn`, reaped by a thread of its own, whose exit can be awaited
/// with a bound and which can be signalled without ever hitting another process.
///
/// Why not Foundation's `Process`: on Linux one manager thread learns of every child's exit,
/// through a socket pair each child inherits, and reaps it with a blocking `waitpid`. A child
/// that closes its descriptors makes that thread wait for it alone while every other exit goes
/// unseen, a grandchild that keeps the pair hides the child's exit, and `waitUntilExit` has no
/// bound: the test suite hung on these. Here each child has one waiter thread (never a thread of
/// the cooperative pool or of dispatch, which have about one per core), and a wait ends at its
/// deadline whatever the child does.
///
/// The waiter sees the exit with `waitid(WNOWAIT)` and reaps under the same lock as `signal`
/// takes, so a signal is never sent to a reused pid.
public final class ChildProcess: Sendable {
    /// The child's process id (still reserved for it until `exitStatus` is set).
    public let pid: pid_t
    private let state = LockedState(State())

    private struct State {
        var status: Int32?
        var waiters: [UInt64: CheckedContinuation<Int32?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// Starts `executable` as `ChildSpawn.start(_:arguments:environment:stdin:stdout:stderr:)`
    /// does.
    public init(_ executable: String, arguments: [String], environment: [String],
                stdin: ChildSpawn.Input = .null, stdout: ChildSpawn.Output, stderr: ChildSpawn.Output? = nil) throws {
        pid = try ChildSpawn.start(executable, arguments: arguments, environment: environment,
                                   stdin: stdin, stdout: stdout, stderr: stderr)
        let pid = self.pid
        let state = self.state
        Thread {
            var info = siginfo_t()
            // Blocks until the child has exited, leaving it a zombie: its pid stays its own.
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            let waiters = state.withLock { state -> [CheckedContinuation<Int32?, Never>] in
                state.status = ChildSpawn.waitForExit(pid) ?? 128
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            let status = state.withLock { $0.status }
            for waiter in waiters { waiter.resume(returning: status) }
        }.start()
    }

    /// The exit code (128 + the signal for a killed child) once the child has exited; nil while
    /// it runs.
    public var exitStatus: Int32? { state.withLock { $0.status } }

    /// Whether the child still runs.
    public var isRunning: Bool { exitStatus == nil }

    /// Sends `signal` to the child while it runs; after its exit, does nothing.
    public func signal(_ signal: Int32) {
        state.withLock { state in
            if state.status == nil { _ = kill(pid, signal) }
        }
    }

    /// The exit code, waiting at most `seconds`; nil if the child still runs then (or the
    /// waiting task is cancelled).
    public func exit(within seconds: Double) async -> Int32? {
        if let status = exitStatus { return status }
        return await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await self.exit() }
            group.addTask {
                await sleep(boundedSeconds: seconds)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? exitStatus
        }
    }

    /// The exit code once the child exits; nil if the waiting task is cancelled first.
    public func exit() async -> Int32? {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
                let status = state.withLock { state -> Int32?? in
                    if let status = state.status { return .some(status) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let status { continuation.resume(returning: status) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }

    /// Stops the child: SIGTERM, then SIGKILL if it has not exited within `grace` seconds.
    /// Returns its exit code (nil only if it outlived SIGKILL's wait of `grace` too).
    @discardableResult
    public func stop(grace: Double = 15) async -> Int32? {
        signal(SIGTERM)
        if let status = await exit(within: grace) { return status }
        signal(SIGKILL)
        return await exit(within: grace)
    }
}
