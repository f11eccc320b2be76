import Foundation
import Glibc
import ImageCacheSupport

/// What a program the tests ran wrote, and how it ended.
public struct ToolOutcome: Sendable {
    /// The exit code, or 128 + the signal that killed it.
    public var status: Int32
    /// Its stdout (with its stderr too when they were merged).
    public var stdout: String
    /// Its stderr (empty when merged into stdout).
    public var stderr: String
}

/// Runs `executable arguments…` to its end and returns what it wrote: stdin from `input` (or
/// empty), stdout and stderr read as they come by threads of their own (so a chatty program
/// never blocks on a full pipe), merged into `stdout` when `mergeOutput`. `environment` nil
/// means this process's.
///
/// Bounded: a program still running after `seconds` is killed (SIGKILL) and `TimeoutError` is
/// thrown; once it has exited, output a grandchild still holds open is waited for at most 10 s,
/// then what was read is the answer. Started by `ChildProcess`: no descriptor of the test
/// process leaks into it, and no thread of the cooperative pool or of dispatch waits for it.
public func runTool(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    input: String? = nil, mergeOutput: Bool = false, seconds: Double = 60) async throws -> ToolOutcome {
    let started = try PipedChild.start(executable, arguments, environment: environment, input: input,
                                       stderr: mergeOutput ? .merged : .pipe)
    let child = started.child
    let out = PipeDrain(started.stdout)
    let err = started.stderr.map { PipeDrain($0) }
    guard let status = await child.exit(within: seconds) else {
        child.signal(SIGKILL)
        _ = await child.exit(within: 10)
        throw TimeoutError(seconds: seconds)
    }
    return ToolOutcome(status: status, stdout: await out.text(within: 10), stderr: await err?.text(within: 10) ?? "")
}

/// A program started with its stdin fed from a string and its output on pipes this process
/// reads: how `runTool` and the CLI tests' runner both start one.
public struct PipedChild: Sendable {
    /// Where the child's stderr goes.
    public enum StandardError: Sendable {
        /// A pipe of its own (`stderr` is its read end).
        case pipe
        /// Into the stdout pipe.
        case merged
        /// A descriptor of this process (a pseudo-terminal's side); the caller reads it.
        case descriptor(Int32)
    }

    /// The running child.
    public let child: ChildProcess
    /// The read end of its stdout, for the caller to read (and close).
    public let stdout: Int32
    /// The read end of its stderr with `.pipe`, nil otherwise.
    public let stderr: Int32?

    /// Starts `executable arguments…` in `environment` (nil: this process's), writes `input`
    /// (nil: nothing) to its stdin from a thread of its own, and closes this process's copies
    /// of the child's ends, so a reader sees the end once the child (and anything it started
    /// with them) is gone.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String]?, input: String?,
                             stderr: StandardError) throws -> PipedChild {
        let stdinPipe = try CloseOnExecPipe()
        let stdoutPipe = try CloseOnExecPipe()
        let stderrPipe = try CloseOnExecPipe()
        let errorOutput: ChildSpawn.Output? = switch stderr {
        case .pipe: .descriptor(stderrPipe.write)
        case .merged: nil
        case .descriptor(let fd): .descriptor(fd)
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(executable, arguments: arguments,
                                     environment: (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" },
                                     stdin: .descriptor(stdinPipe.read), stdout: .descriptor(stdoutPipe.write), stderr: errorOutput)
        } catch {
            for fd in [stdinPipe.read, stdinPipe.write, stdoutPipe.read, stdoutPipe.write, stderrPipe.read, stderrPipe.write] { close(fd) }
            throw error
        }
        close(stdinPipe.read)
        close(stdoutPipe.write)
        close(stderrPipe.write)
        feedAndClose(stdinPipe.write, Array((input ?? "").utf8))
        var errorRead: Int32? = stderrPipe.read
        if case .pipe = stderr {} else {
            close(stderrPipe.read)
            errorRead = nil
        }
        return PipedChild(child: child, stdout: stdoutPipe.read, stderr: errorRead)
    }
}

/// Writes `bytes` to `fd` on a thread of its own (a child reads its stdin at its own pace), then
/// closes `fd`, which it owns from now on.
public func feedAndClose(_ fd: Int32, _ bytes: [UInt8]) {
    Thread {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            sent += count
        }
        close(fd)
    }.start()
}

/// Runs a short system tool (`mount`, `umount`) to its end and returns its exit code (-1 if it
/// could not be started), its output discarded, in this process's environment. Blocks the
/// calling thread until the tool exits: only for tools that end at once, from synchronous
/// fixtures.
public func runShortTool(_ executable: String, _ arguments: [String]) -> Int32 {
    let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
    guard let pid = try? ChildSpawn.start(executable, arguments: arguments, environment: environment, output: .discard) else { return -1 }
    return ChildSpawn.waitForExit(pid) ?? -1
}
