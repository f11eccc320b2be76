import Foundation
import ImageCacheSupport
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `ChildSpawn` with real programs: a child holds nothing of its parent but 0–2, hears SIGTERM
/// even when started from a thread that blocks it, and its exit is reported as a shell would.
@Suite("Support: starting a child process", .timeLimit(.minutes(1)))
struct ChildSpawnTests {
    /// Runs `start` on a thread of its own whose signal mask blocks SIGTERM (as NIO's and
    /// dispatch's threads do), and returns what it returned.
    private static func startFromABlockingThread(_ start: @escaping @Sendable () throws -> pid_t) throws -> pid_t {
        let result = LockedState<Result<pid_t, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            result.withLock { $0 = Result { try start() } }
            done.signal()
        }
        thread.start()
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// Starts `/bin/sleep 30` from a thread that blocks SIGTERM.
    private static func sleeperFromABlockingThread() throws -> pid_t {
        try startFromABlockingThread {
            try ChildSpawn.start("/bin/sleep", arguments: ["30"], environment: [], output: .discard)
        }
    }

    /// The child is a shell that says "ready" and then waits on its stdin: once it has spoken,
    /// its dynamic loader is done, so what it holds is what it inherited. (A program looked at
    /// the moment `posix_spawn` returns may still be loading its libraries through a descriptor
    /// 3 of its own; this test once listed exactly that.)
    @Test("a child holds only 0, 1 and 2, though the parent holds a descriptor without close-on-exec")
    func onlyTheStandardDescriptors() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)  // no O_CLOEXEC: Foundation's Process would let it through
        defer { close(fds[0]); close(fds[1]) }
        let input = try CloseOnExecPipe()
        let output = try CloseOnExecPipe()
        let pid = try Self.startFromABlockingThread {
            try ChildSpawn.start("/bin/sh", arguments: ["-c", "echo ready; read line"], environment: [],
                                 stdin: .descriptor(input.read), stdout: .descriptor(output.write), stderr: nil)
        }
        close(input.read)
        close(output.write)
        defer {
            close(input.write)  // the shell's read sees its end, and it exits
            #expect(ChildSpawn.waitForExit(pid) != nil)
            close(output.read)
        }
        var said = [UInt8](repeating: 0, count: 16)
        let count = read(output.read, &said, said.count)  // "ready", or the end if the shell died
        #expect(count > 0 && String(decoding: said.prefix(max(count, 0)), as: UTF8.self) == "ready\n")
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").sorted()
        #expect(held == ["0", "1", "2"])
    }

    @Test("a child started from a thread that blocks SIGTERM stops on SIGTERM (exit 143)")
    func hearsSIGTERM() throws {
        let pid = try Self.sleeperFromABlockingThread()
        kill(pid, SIGTERM)
        #expect(ChildSpawn.waitForExit(pid) == 128 + SIGTERM)
    }

    @Test("exit codes as a shell reports them; output to a file, appended; stdin is /dev/null")
    func exitCodesAndOutput() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = "\(folder)/out.log"
        for (script, code) in [("echo one; exit 3", Int32(3)), ("echo two >&2; exit 0", 0), ("readlink /proc/$$/fd/0", 0)] {
            let pid = try ChildSpawn.start("/bin/sh", arguments: ["-c", script], environment: ["PATH=/usr/bin:/bin"],
                                           output: .file(path: log, append: true, mode: 0o600))
            #expect(ChildSpawn.waitForExit(pid) == code)
        }
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "one\ntwo\n/dev/null\n")
        #expect(ChildSpawn.waitForExit(getpid()) == nil)  // not a child
    }

    @Test("a missing program is a clear error, and the output file is not opened through a symlink")
    func failures() throws {
        #expect(throws: ChildSpawn.Failure.self) {
            try ChildSpawn.start("/nonexistent/program", arguments: [], environment: [], output: .discard)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = "\(folder)/target"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/link", withDestinationPath: target)
        // posix_spawn reports a failed open in the child as the spawn's failure.
        #expect(throws: ChildSpawn.Failure.self) {
            let pid = try ChildSpawn.start("/bin/sh", arguments: ["-c", "echo overwritten"], environment: [],
                                           output: .file(path: "\(folder)/link", append: false, mode: 0o600))
            _ = ChildSpawn.waitForExit(pid)
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
    }
}
