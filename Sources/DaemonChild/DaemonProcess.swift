import Foundation
import ImageCacheClient
import ImageCacheSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real `imagecached` started as a child process: what the CLI's offline demo runs, what the
/// tests start to check the daemon as a user runs it, and what the benchmarks measure.
///
/// One type for the three, so that starting, awaiting and stopping a daemon is done one way:
/// started by `ChildProcess` (no descriptor of this process but 0–2, an empty signal mask,
/// default signal actions: a daemon spawned from a NIO thread would otherwise never see
/// SIGTERM), its start awaited as an event (`READY=1` on a notification socket, then `hello`
/// on its socket), its output kept where the caller needs it, and its stop bounded (SIGTERM,
/// then SIGKILL). What differs between callers is an option: `Output` and `Readiness`.
/// The demo's provider simulator, a helper server rather than a daemon, is started, awaited and
/// stopped the same way (`Readiness.announces`).
///
/// Only this child is ever signalled, by its pid, and never after it was reaped.
public final class DaemonProcess: Sendable {
    /// Why the daemon could not be started, awaited or stopped cleanly.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What went wrong, with the daemon's last log lines when they explain it.
        public var description: String

        /// A failure that says `description`.
        public init(description: String) { self.description = description }
    }

    /// Where the daemon's stdout and stderr go.
    public enum Output: Sendable {
        /// stdout is discarded; stderr is read by this process as it comes and kept as lines
        /// (`log`, `waitForLog`): for callers that wait for a logged event.
        case captured
        /// stdout and stderr are appended to the file at `path` (created 0600), which outlives
        /// this process: for a user or a report to read afterwards (`logTail`).
        case file(path: String)
    }

    /// Whether `waitUntilReady` can be used.
    public enum Readiness: Sendable {
        /// The caller awaits its own event (a log line, the exit); the environment is passed
        /// as given, `NOTIFY_SOCKET` included.
        case none
        /// The daemon gets a notification socket of this process's own as `NOTIFY_SOCKET`, and
        /// `waitUntilReady` waits for its `READY=1`, then for `hello` on `socketPath`.
        case answers(socketPath: String)
        /// A helper server of this process (the demo's provider simulator): it writes one line
        /// on stdout once it serves, what it announces (its addresses), which
        /// `waitForAnnouncement` returns. Its stdin is always the lifeline (see `init`).
        case announces
    }

    private let child: ChildProcess
    private let output: Output
    private let readiness: Readiness
    private let listener: ReadinessListener?
    private let captured: CapturedLog?
    /// The stderr reader with `.captured`: its end says every line the process wrote is in `log`.
    private let drain: PipeDrain?
    /// Stdout's lines with `.announces`, and their reader (its end: every line is in).
    private let announcements: CapturedLog?
    private let announcementDrain: PipeDrain?
    /// The write end of the child's stdin with a lifeline, closed when this helper goes away
    /// (or by `cutLifeline`); nil once closed.
    private let lifeline: LockedState<Int32?>
    /// The executable's file name, for messages about a helper server.
    private let program: String

    /// Starts `executable arguments…` with exactly `environment`.
    ///
    /// `executable` is the daemon or a wrapper that execs it (`prlimit`, `setpriv`,
    /// `systemd-socket-activate`). With `.answers`, `environment` must not name a
    /// `NOTIFY_SOCKET`: the daemon's is this process's. With `lifeline` (and always with
    /// `.announces`) the child's stdin is a pipe this process holds open while it lives: when
    /// this process ends, however it ends (SIGKILL included), the child reads the end of its
    /// input and can stop (`--watch-stdin`: `StdinLifeline`); otherwise stdin is /dev/null.
    public init(executable: String, arguments: [String], environment: [String: String],
                output: Output, readiness: Readiness = .none, lifeline: Bool = false) throws {
        program = URL(fileURLWithPath: executable).lastPathComponent
        var environment = environment
        if case .answers = readiness {
            guard environment["NOTIFY_SOCKET"] == nil else {
                throw Failure(description: "NOTIFY_SOCKET is the helper's own when it awaits the daemon's readiness")
            }
            let listener = try ReadinessListener()
            environment["NOTIFY_SOCKET"] = listener.address
            self.listener = listener
        } else {
            listener = nil
        }
        let variables = environment.map { "\($0.key)=\($0.value)" }
        // The pipes the child's ends are made from: stderr's with `.captured`, stdout's with
        // `.announces`, stdin's with a lifeline. Each is closed here if the start fails.
        var pipes: [CloseOnExecPipe] = []
        func pipe() throws -> CloseOnExecPipe {
            do {
                let made = try CloseOnExecPipe()
                pipes.append(made)
                return made
            } catch {
                for open in pipes { close(open.read); close(open.write) }
                throw Failure(description: "cannot start \(executable): \(error)")
            }
        }
        var announced: CloseOnExecPipe?
        var stdinPipe: CloseOnExecPipe?
        if case .announces = readiness {
            announced = try pipe()
            stdinPipe = try pipe()
        } else if lifeline {
            stdinPipe = try pipe()
        }
        let stderrPipe: CloseOnExecPipe?
        let stdout: ChildSpawn.Output
        let stderr: ChildSpawn.Output?
        switch output {
        case .file(let path):
            let file = ChildSpawn.Output.file(path: path, append: true, mode: 0o600)
            stderrPipe = nil
            if let announced {
                stdout = .descriptor(announced.write)
                stderr = file
            } else {
                stdout = file
                stderr = nil
            }
        case .captured:
            let made = try pipe()
            stderrPipe = made
            stdout = announced.map { .descriptor($0.write) } ?? .discard
            stderr = .descriptor(made.write)
        }
        do {
            child = try ChildProcess(executable, arguments: arguments, environment: variables,
                                     stdin: stdinPipe.map { .descriptor($0.read) } ?? .null, stdout: stdout, stderr: stderr)
        } catch {
            for open in pipes { close(open.read); close(open.write) }
            throw Failure(description: "cannot start \(executable): \(error)")
        }
        // The child's ends are the child's now.
        for end in [announced?.write, stderrPipe?.write, stdinPipe?.read].compactMap({ $0 }) { close(end) }
        if let stderrPipe {
            let log = CapturedLog()
            captured = log
            drain = PipeDrain(stderrPipe.read) { log.append($0) }
        } else {
            captured = nil
            drain = nil
        }
        if let announced {
            let lines = CapturedLog()
            announcements = lines
            announcementDrain = PipeDrain(announced.read) { lines.append($0) }
        } else {
            announcements = nil
            announcementDrain = nil
        }
        self.lifeline = LockedState(stdinPipe?.write)
        self.output = output
        self.readiness = readiness
    }

    /// The child's process id.
    public var pid: pid_t { child.pid }

    /// The exit code once the daemon has exited (128 + the signal when killed), nil while it runs.
    public var exitStatus: Int32? { child.exitStatus }

    /// The socket `waitUntilReady` checks, with `.answers`.
    public var socketPath: String? {
        if case .answers(let socketPath) = readiness { return socketPath }
        return nil
    }

    /// Every line the daemon wrote to stderr so far, with `.captured` (empty otherwise).
    public var log: [String] { captured?.lines ?? [] }

    /// Waits until the daemon has sent `READY=1` and its socket answers `hello`, at most
    /// `timeout` seconds, and returns that session. Fails at once when the daemon exits first
    /// (a bad config, a socket in use), quoting its log.
    public func waitUntilReady(timeout: Double) async throws -> ImageCacheConnection {
        guard let listener, case .answers(let socketPath) = readiness else {
            throw Failure(description: "started without .answers: nothing to wait for")
        }
        let pid = self.pid
        let outcome = await firstOf(within: timeout, discardLate: { await $0.close() }) { () async throws -> ImageCacheConnection in
            guard await listener.ready(from: pid) else { throw CancellationError() }
            let connection = try await ImageCacheConnection.connect(to: socketPath)
            do {
                _ = try await connection.hello()
            } catch {
                await connection.close()
                throw error
            }
            return connection
        }
        switch outcome {
        case .done(.success(let connection)):
            return connection
        case .done(.failure(let error)):
            if error is CancellationError { throw error }
            throw Failure(description: "imagecached announced it was ready but \(socketPath) did not answer (\(error)):\n\(logTail())")
        case .exited(let status):
            _ = await drain?.text(within: 10)
            throw Failure(description: "imagecached exited with status \(status) before answering:\n\(logTail())")
        case .cancelled:
            throw CancellationError()
        case .timedOut:
            throw Failure(description: "imagecached did not answer on \(socketPath) within \(timeout) s:\n\(logTail())")
        }
    }

    /// Waits until the child has written its first line on stdout, at most `timeout` seconds,
    /// and returns it; with `.announces` only. Fails at once when the child exits first,
    /// quoting its stderr (with `.captured`) or its log file.
    public func waitForAnnouncement(timeout: Double) async throws -> String {
        guard let announcements else { throw Failure(description: "started without .announces: nothing to wait for") }
        let outcome = await firstOf(within: timeout) { () async throws -> Bool in await announcements.wait { _ in true } }
        switch outcome {
        case .done(.success(true)):
            if let line = announcements.lines.first { return line }
            throw CancellationError()
        case .exited(let status):
            // Its line may still be in the pipe: the exit is seen before it is read.
            _ = await announcementDrain?.text(within: 10)
            if let line = announcements.lines.first { return line }
            _ = await drain?.text(within: 10)
            throw Failure(description: "\(program) exited with status \(status) before announcing where it serves:\n\(logTail())")
        case .timedOut:
            throw Failure(description: "\(program) announced nothing within \(timeout) s:\n\(logTail())")
        default:
            throw CancellationError()
        }
    }

    /// Waits until a stderr line contains `text` (one already logged counts), at most `seconds`;
    /// with `.captured` only. Fails when the time passes or the daemon exits first.
    public func waitForLog(_ text: String, within seconds: Double) async throws {
        guard let captured else { throw Failure(description: "the log is in a file: nothing captured to wait on") }
        let outcome = await firstOf(within: seconds) { () async throws -> Bool in await captured.wait(for: text) }
        switch outcome {
        case .done(.success(true)):
            return
        case .exited:
            // Its last lines may still be in the pipe: the exit is seen before they are read.
            _ = await drain?.text(within: 10)
            if captured.lines.contains(where: { $0.contains(text) }) { return }
            throw Failure(description: "imagecached exited (status \(exitStatus ?? -1)) without logging \"\(text)\":\n\(logTail())")
        case .cancelled:
            throw CancellationError()
        default:
            try Task.checkCancellation()
            throw Failure(description: "imagecached logged no line with \"\(text)\" within \(seconds) s:\n\(logTail())")
        }
    }

    /// Sends `signal` while the daemon runs (SIGHUP: reload the configuration).
    public func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// The exit code once the daemon has exited, waiting at most `seconds` (nil if it still
    /// runs then). With `.captured`, also waits (at most 10 s more) until its stderr is read to
    /// the end, so `log` holds its last lines.
    public func exit(within seconds: Double) async -> Int32? {
        guard let status = await child.exit(within: seconds) else { return nil }
        _ = await drain?.text(within: 10)
        return status
    }

    /// Stops the daemon: SIGTERM, then at most `timeout` seconds for its exit; if it still
    /// runs, SIGKILL (reaped by the child's own waiter) and nil. Otherwise its exit code.
    @discardableResult
    public func stop(timeout: Double = 15) async -> Int32? {
        child.signal(SIGTERM)
        if let status = await exit(within: timeout) { return status }
        child.signal(SIGKILL)
        return nil
    }

    /// Closes this process's end of the child's stdin now, as this process's end would: the
    /// child sees its lifeline end (the tests' way to stand for a parent that is gone).
    package func cutLifeline() {
        let end: Int32? = lifeline.withLock { end in
            defer { end = nil }
            return end
        }
        if let end { close(end) }
    }

    /// Kills the daemon at once (SIGKILL): a failed test or run must not leave one behind.
    public func kill() {
        child.signal(SIGKILL)
    }

    /// The log's last lines, indented, for a failure message.
    public func logTail(lines: Int = 15) -> String {
        let all: [Substring]
        switch output {
        case .captured:
            all = log.map { Substring($0) }
        case .file(let path):
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            all = text.split(separator: "\n", omittingEmptySubsequences: false)
        }
        return all.suffix(lines).map { "    " + $0 }.joined(separator: "\n")
    }

    deinit {
        cutLifeline()
    }

    // MARK: Racing the daemon's exit

    private enum Outcome<T: Sendable>: Sendable {
        case done(Result<T, any Error>)
        case exited(Int32)
        case timedOut
        /// The waiting task was cancelled (the demo's Ctrl-C).
        case cancelled
    }

    /// Runs `operation` against the daemon's exit and a deadline; the first of the three wins
    /// and the others are cancelled. A cancelled caller gets `.cancelled` at once. What
    /// `operation` still makes after it lost (a connection opened as the deadline passed) is
    /// handed to `discardLate`, so nothing it holds is left open.
    private func firstOf<T: Sendable>(within seconds: Double,
                                      discardLate: @escaping @Sendable (T) async -> Void = { _ in },
                                      _ operation: @escaping @Sendable () async throws -> T) async -> Outcome<T> {
        let child = self.child
        return await withTaskGroup(of: Outcome<T>?.self) { group in
            group.addTask {
                do { return .done(.success(try await operation())) } catch { return .done(.failure(error)) }
            }
            group.addTask { await child.exit().map { .exited($0) } }
            group.addTask {
                await sleep(boundedSeconds: seconds)
                return Task.isCancelled ? nil : .timedOut
            }
            var first: Outcome<T>?
            while first == nil, let next = await group.next() {
                first = next
            }
            group.cancelAll()
            for await late in group {
                if case .done(.success(let value))? = late { await discardLate(value) }
            }
            return first ?? (Task.isCancelled ? .cancelled : .timedOut)
        }
    }
}
