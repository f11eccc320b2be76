import Foundation
import ImageCacheSupport
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `ChildProcess` with real programs: each child's exit is seen on its own, every wait has a
/// bound, and a stopped or cancelled wait leaves nothing running.
@Suite("Support: a child process and its exit", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    @Test("stdin, stdout and stderr are the descriptors named; the exit code is the child's")
    func descriptorsAndExitCode() async throws {
        let outcome = try await runTool("/bin/sh", ["-c", #"read line; echo "out:$line"; echo err >&2; exit 5"#],
                                        environment: ["PATH": "/usr/bin:/bin"], input: "hello\n", seconds: 20)
        #expect(outcome.status == 5)
        #expect(outcome.stdout == "out:hello\n")
        #expect(outcome.stderr == "err\n")
        let merged = try await runTool("/bin/sh", ["-c", "echo one; echo two >&2"], environment: [:], mergeOutput: true, seconds: 20)
        #expect(merged.status == 0 && merged.stdout == "one\ntwo\n" && merged.stderr.isEmpty)
    }

    @Test("a bounded wait on a running child ends at its bound; SIGTERM then ends the child (143)")
    func boundedWait() async throws {
        let sleeper = try ChildProcess("/bin/sleep", arguments: ["30"], environment: [], stdout: .discard)
        #expect(await sleeper.exit(within: 0.2) == nil)
        // A NaN or negative bound waits no time, and does not trap.
        #expect(await sleeper.exit(within: .nan) == nil)
        #expect(await sleeper.exit(within: -5) == nil)
        #expect(sleeper.isRunning)
        // An unbounded (infinite) wait is clamped, not a trap, and still ends with the exit.
        async let unbounded = sleeper.exit(within: .infinity)
        sleeper.signal(SIGTERM)
        #expect(await sleeper.exit(within: 20) == 128 + SIGTERM)
        #expect(await unbounded == 128 + SIGTERM)
        #expect(sleeper.exitStatus == 128 + SIGTERM && !sleeper.isRunning)
        sleeper.signal(SIGKILL)  // after the exit: sent to no one
        #expect(await sleeper.exit() == 128 + SIGTERM)
    }

    @Test("a cancelled wait returns nil at once and the child goes on")
    func cancelledWait() async throws {
        let sleeper = try ChildProcess("/bin/sleep", arguments: ["30"], environment: [], stdout: .discard)
        defer { sleeper.signal(SIGKILL) }
        let waiter = Task { await sleeper.exit() }
        waiter.cancel()
        let cancelled = try await withTimeout(seconds: 10) { await waiter.value }
        #expect(cancelled == nil)
        #expect(sleeper.isRunning)
    }

    @Test("stop sends SIGTERM, then SIGKILL to a child that ignores it")
    func stopEscalates() async throws {
        // An ignored signal stays ignored across exec; "ready" comes once the trap is set.
        let output = try CloseOnExecPipe()
        let stubborn = try ChildProcess("/bin/sh", arguments: ["-c", "trap '' TERM; echo ready; exec sleep 30"], environment: [],
                                        stdout: .descriptor(output.write))
        close(output.write)
        let (arrivals, arrival) = AsyncStream.makeStream(of: Void.self)
        let drain = PipeDrain(output.read) { _ in arrival.yield() }
        try await withTimeout(seconds: 10) {
            for await _ in arrivals { break }
        }
        #expect(await stubborn.stop(grace: 0.5) == 128 + SIGKILL)
        #expect(await drain.text(within: 10) == "ready\n")
    }

    @Test("each child's exit is seen while another child runs on, whatever the other holds")
    func exitsAreIndependent() async throws {
        // Foundation's Process reaped every child on one thread and missed exits while a
        // child that had closed its descriptors lived on; here each child has its own waiter.
        let longLived = try ChildProcess("/bin/sh", arguments: ["-c", "exec 3>&- 4>&- 5>&-; exec sleep 30"], environment: [], stdout: .discard)
        defer { longLived.signal(SIGKILL) }
        let codes = try await withTimeout(seconds: 30) {
            try await withThrowingTaskGroup(of: Int32?.self) { group in
                for code in 0..<12 {
                    group.addTask {
                        let child = try ChildProcess("/bin/sh", arguments: ["-c", "exit \(code)"], environment: [], stdout: .discard)
                        return await child.exit()
                    }
                }
                var codes: [Int32] = []
                for try await code in group { codes.append(code ?? -1) }
                return codes.sorted()
            }
        }
        #expect(codes == Array(0..<12))
        #expect(longLived.isRunning)
    }
}
