import DaemonChild
import Foundation
import Glibc
import Testing
import TestSupport

/// The one daemon-process helper of the demo, the tests and the benchmarks: a real daemon's
/// start awaited as an event (its `READY=1`, then `hello`), a daemon that dies first or never
/// answers reported within the bound with its log, and a stop that kills what ignores SIGTERM.
@Suite("Daemon process helper", .timeLimit(.minutes(2)))
struct DaemonChildTests {
    private let shell = "/bin/sh"

    @Test("a real daemon is awaited until it answers hello, its log goes to the file, and SIGTERM stops it with 0")
    func readyThenStopped() async throws {
        let place = DaemonProcessTests.Place()
        defer { place.remove() }
        let log = place.folder + "/daemon.log"
        let daemon = try DaemonProcess(executable: DaemonProcess.executable.path, arguments: ["--socket", place.socket, "--log-level", "info"],
                                       environment: DaemonProcess.environment(home: place.folder),
                                       output: .file(path: log), readiness: .answers(socketPath: place.socket))
        defer { daemon.kill() }
        let connection = try await daemon.waitUntilReady(timeout: 60 * timeoutScale)
        let hello = try await connection.hello()
        #expect(hello.name == "imagecached")
        await connection.close()
        #expect(daemon.exitStatus == nil)
        #expect(await daemon.stop(timeout: 30 * timeoutScale) == 0)
        #expect(daemon.exitStatus == 0)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains(place.socket), "\(text)")
        #expect(daemon.logTail(lines: 2).split(separator: "\n").count <= 2)
    }

    @Test("with --watch-stdin a real daemon that is serving stops with 0 once its lifeline ends, as when the demo that started it is killed")
    func stopsWhenLifelineEnds() async throws {
        let place = DaemonProcessTests.Place()
        defer { place.remove() }
        let daemon = try DaemonProcess(executable: DaemonProcess.executable.path,
                                       arguments: ["--socket", place.socket, "--log-level", "info", "--watch-stdin"],
                                       environment: DaemonProcess.environment(home: place.folder),
                                       output: .captured, readiness: .answers(socketPath: place.socket), lifeline: true)
        defer { daemon.kill() }
        let connection = try await daemon.waitUntilReady(timeout: 60 * timeoutScale)
        _ = try await connection.hello()
        await connection.close()
        daemon.cutLifeline()
        #expect(await daemon.exit(within: 60 * timeoutScale) == 0)
        #expect(daemon.log.contains { $0.contains("stdin ended") }, "\(daemon.logTail())")
    }

    @Test("--watch-stdin with stdin that is not a pipe (here /dev/null) is refused at the start with status 64 and why")
    func watchStdinNeedsAPipe() async throws {
        let place = DaemonProcessTests.Place()
        defer { place.remove() }
        let daemon = try DaemonProcess(executable: DaemonProcess.executable.path, arguments: ["--socket", place.socket, "--watch-stdin"],
                                       environment: DaemonProcess.environment(home: place.folder),
                                       output: .captured, readiness: .answers(socketPath: place.socket))
        defer { daemon.kill() }
        _ = try await #require(throws: DaemonProcess.Failure.self) { _ = try await daemon.waitUntilReady(timeout: 600) }
        #expect(daemon.exitStatus == 64)
        #expect(daemon.log.contains { $0.contains("--watch-stdin needs stdin to be a pipe") }, "\(daemon.logTail())")
    }

    @Test("a daemon that exits before it is ready fails the wait at once, quoting its log")
    func exitsFirst() async throws {
        let place = DaemonProcessTests.Place()
        defer { place.remove() }
        try place.write(config: "[daemon]\nno_such_key = 1\n")
        let daemon = try DaemonProcess(executable: DaemonProcess.executable.path, arguments: ["--config", place.config, "--socket", place.socket],
                                       environment: DaemonProcess.environment(home: place.folder),
                                       output: .captured, readiness: .answers(socketPath: place.socket))
        defer { daemon.kill() }
        let started = ContinuousClock.now
        let failure = try await #require(throws: DaemonProcess.Failure.self) {
            _ = try await daemon.waitUntilReady(timeout: 600)
        }
        #expect(ContinuousClock.now - started < .seconds(120))
        let status = try #require(daemon.exitStatus)
        #expect(status != 0)
        #expect(failure.description.contains("exited with status \(status) before answering"), "\(failure)")
        #expect(failure.description.contains("no_such_key"), "\(failure)")
        #expect(daemon.log.contains { $0.contains("no_such_key") })
    }

    @Test("a program that never announces readiness fails the wait at its bound")
    func neverReady() async throws {
        let place = DaemonProcessTests.Place()
        defer { place.remove() }
        let silent = try DaemonProcess(executable: shell, arguments: ["-c", "exec sleep 600"], environment: [:],
                                       output: .captured, readiness: .answers(socketPath: place.socket))
        defer { silent.kill() }
        let failure = try await #require(throws: DaemonProcess.Failure.self) {
            _ = try await silent.waitUntilReady(timeout: 0.5)
        }
        #expect(failure.description.contains("did not answer on \(place.socket)"), "\(failure)")
        #expect(silent.exitStatus == nil)
    }

    @Test("stop kills a process that ignores SIGTERM once its bound has passed")
    func stopKillsOnTimeout() async throws {
        let stubborn = try DaemonProcess(executable: shell, arguments: ["-c", "trap '' TERM; echo ignoring >&2; exec sleep 600"],
                                         environment: [:], output: .captured)
        defer { stubborn.kill() }
        try await stubborn.waitForLog("ignoring", within: 30 * timeoutScale)
        #expect(await stubborn.stop(timeout: 0.5) == nil)
        #expect(await stubborn.exit(within: 30 * timeoutScale) == 128 + SIGKILL)
    }

    @Test("a wait for a log line ends when the process exits without writing it")
    func logWaitEndsAtExit() async throws {
        let brief = try DaemonProcess(executable: shell, arguments: ["-c", "echo first >&2; echo second >&2; exit 3"],
                                      environment: [:], output: .captured)
        defer { brief.kill() }
        try await brief.waitForLog("second", within: 30 * timeoutScale)
        let failure = try await #require(throws: DaemonProcess.Failure.self) {
            try await brief.waitForLog("never written", within: 600)
        }
        #expect(failure.description.contains("exited (status 3)"), "\(failure)")
        #expect(brief.log == ["first", "second"])
    }

    @Test("a helper server's first stdout line is its announcement; its stdin stays open until it is stopped")
    func announces() async throws {
        let helper = try DaemonProcess(executable: shell, arguments: ["-c", "echo 'at 127.0.0.1:1'; echo later; echo started >&2; read line; echo \"stdin ended: $?\" >&2"],
                                       environment: [:], output: .captured, readiness: .announces)
        defer { helper.kill() }
        #expect(try await helper.waitForAnnouncement(timeout: 30 * timeoutScale) == "at 127.0.0.1:1")
        try await helper.waitForLog("started", within: 30 * timeoutScale)
        // `read` blocks: the helper holds the other end of the child's stdin.
        #expect(await helper.exit(within: 0.3) == nil)
        #expect(!helper.log.contains { $0.hasPrefix("stdin ended") })
        #expect(await helper.stop(timeout: 30 * timeoutScale) == 128 + SIGTERM)
    }

    @Test("a helper server that exits or stays silent fails the wait for its announcement, quoting its stderr")
    func announcementFailures() async throws {
        let early = try DaemonProcess(executable: shell, arguments: ["-c", "echo 'no port free' >&2; exit 4"],
                                      environment: [:], output: .captured, readiness: .announces)
        defer { early.kill() }
        let failure = try await #require(throws: DaemonProcess.Failure.self) { _ = try await early.waitForAnnouncement(timeout: 600) }
        #expect(failure.description.contains("sh exited with status 4 before announcing"), "\(failure)")
        #expect(failure.description.contains("no port free"), "\(failure)")
        let silent = try DaemonProcess(executable: shell, arguments: ["-c", "exec sleep 600"], environment: [:],
                                       output: .captured, readiness: .announces)
        defer { silent.kill() }
        let timeout = try await #require(throws: DaemonProcess.Failure.self) { _ = try await silent.waitForAnnouncement(timeout: 0.5) }
        #expect(timeout.description.contains("sh announced nothing within 0.5 s"), "\(timeout)")
        #expect(silent.exitStatus == nil)
    }

    @Test("awaiting readiness needs the helper's own NOTIFY_SOCKET")
    func notifySocketIsTheHelpers() {
        #expect(throws: DaemonProcess.Failure.self) {
            _ = try DaemonProcess(executable: shell, arguments: ["-c", "true"], environment: ["NOTIFY_SOCKET": "/run/systemd/notify"],
                                  output: .captured, readiness: .answers(socketPath: "/nonexistent"))
        }
    }

    @Test("the environment handed down withholds API keys and systemd's variables")
    func inheritedEnvironment() {
        let environment = DaemonProcess.inheritedEnvironment(["PATH": "/bin", "UNSPLASH_ACCESS_KEY": "k", "NOTIFY_SOCKET": "@x", "LISTEN_FDS": "1"],
                                                             adding: ["MALLOC_ARENA_MAX": "2"])
        #expect(environment == ["PATH": "/bin", "MALLOC_ARENA_MAX": "2"])
    }
}
