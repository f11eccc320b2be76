#if canImport(Glibc)
import Glibc
#endif

/// The one way the project starts another program (the demo's daemon, `xdg-open`, and every
/// program the tests run): `posix_spawn` with nothing of this process but what is named.
/// `ChildProcess` wraps it with a reaper and bounded waits.
///
/// Why not Foundation's `Process`:
/// - A child would inherit every descriptor this process opened without close-on-exec. `Process`
///   closes the ones it sees open when it spawns, but one another thread opens a moment later
///   (the socket pair through which `Process` itself learns that *another* child exited)
///   reaches the new child. A long-lived child (a daemon, nginx) then keeps that socket open
///   and the other child's exit is never noticed: the test suite hung on exactly this. Here
///   every descriptor from 3 up is closed in the child (`posix_spawn_file_actions_addclosefrom_np`).
/// - A child inherits the spawning thread's signal mask, and NIO's and dispatch's threads block
///   SIGTERM: a daemon started from one would never stop. Here the mask is empty and every
///   signal is at its default action.
public enum ChildSpawn {
    /// Why a program could not be started.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What failed, with the C library's reason.
        public var description: String
    }

    /// Where the child's stdin comes from.
    public enum Input: Sendable {
        /// `/dev/null`: an empty input.
        case null
        /// A descriptor of this process (a pipe's read end), duplicated onto the child's 0.
        case descriptor(Int32)
    }

    /// Where a child's stdout or stderr goes.
    public enum Output: Sendable {
        /// `/dev/null`.
        case discard
        /// A file, created with `mode` if missing; `append` keeps what it holds.
        case file(path: String, append: Bool, mode: mode_t)
        /// A descriptor of this process (a pipe's write end, a pseudo-terminal), duplicated
        /// onto the child's.
        case descriptor(Int32)
    }

    /// Starts `executable` (an absolute path) with `arguments` and exactly `environment`
    /// ("NAME=value" entries), stdin from `/dev/null`, stdout and stderr both to `output`, no
    /// other descriptor, an empty signal mask and default signal actions. Returns its pid; the
    /// caller reaps it (`ChildProcess` does).
    public static func start(_ executable: String, arguments: [String], environment: [String],
                             output: Output) throws -> pid_t {
        try start(executable, arguments: arguments, environment: environment, stdin: .null, stdout: output, stderr: nil)
    }

    /// Starts `executable` as `start(_:arguments:environment:output:)` does, with stdin from
    /// `stdin`, stdout to `stdout` and stderr to `stderr` (nil: wherever stdout goes). The
    /// descriptors named are the only ones the child gets besides 0, 1 and 2; the caller closes
    /// its copies of the child's ends once this returns.
    public static func start(_ executable: String, arguments: [String], environment: [String],
                             stdin: Input, stdout: Output, stderr: Output?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch stdin {
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        func direct(_ output: Output, to target: Int32) {
            switch output {
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path, let append, let mode):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_NOFOLLOW | (append ? O_APPEND : O_TRUNC), mode)
            case .descriptor(let fd):
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        direct(stdout, to: 1)
        if let stderr {
            direct(stderr, to: 2)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // glibc ≥ 2.34 has it, but Swift's Glibc module does not declare this GNU extension:
        // looked up by name. Debian 12 has glibc 2.36.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw Failure(description: "cannot start \(executable): this C library cannot close a child's other descriptors")
        }
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Waits for `pid` to exit (retrying on EINTR) and returns the exit code, or 128 + the
    /// signal number for a child killed by a signal (as a shell reports it); nil if it is not
    /// this process's child. Blocks: call it from a thread of its own, never from the
    /// cooperative pool.
    public static func waitForExit(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result == -1 && errno == EINTR
        guard result == pid else { return nil }
        return exitCode(waitStatus: status)
    }

    /// A `waitpid` status as a shell's exit code: the code, or 128 + the signal.
    public static func exitCode(waitStatus status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
