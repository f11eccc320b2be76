import DaemonChild
import Foundation
import Glibc
import Testing
import TestSupport
@testable import ImageCacheCLI

/// What `imagecached` says about its configuration: `--check-config` finds what would stop
/// the start (a group that does not exist, a metrics address that cannot be bound, a root
/// daemon's cache on /proc), a failed metrics bind says in words what failed, and a reload
/// names its file absolutely and the keys it changed.
@Suite("imagecached's configuration messages", .timeLimit(.minutes(3)))
struct DaemonConfigMessageTests {
    /// A workspace with a minimal cache.conf whose `[daemon]` section gets `daemonLines`.
    struct Workspace {
        let dir: String
        var config: String { dir + "/cache.conf" }
        var socket: String { dir + "/d.sock" }

        init(daemonLines: [String] = [], cacheDir: String? = nil) throws {
            dir = "/tmp/icfg-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try write(daemonLines: daemonLines, cacheDir: cacheDir)
        }

        func write(daemonLines: [String], cacheDir: String? = nil) throws {
            let text = """
                [daemon]
                socket = \(socket)
                state_dir = \(dir)/state
                \(daemonLines.joined(separator: "\n"))

                [cache]
                cache_dir = \(cacheDir ?? dir + "/cache")

                [downloads]
                download_dir = \(dir)/downloads

                """
            try text.write(toFile: config, atomically: true, encoding: .utf8)
        }

        /// The line of `cache.conf` that holds `text`.
        func line(of text: String) throws -> Int {
            let lines = try String(contentsOfFile: config, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            return try #require(lines.firstIndex { $0.contains(text) }) + 1
        }

        func remove() { try? FileManager.default.removeItem(atPath: dir) }
    }

    static var daemon: String {
        URL(fileURLWithPath: CLIProcess.binary).deletingLastPathComponent().appendingPathComponent("imagecached").path
    }

    /// A TCP port on 127.0.0.1 another socket listens on while the value lives.
    final class BusyPort: @unchecked Sendable {
        let port: Int
        private let descriptor: Int32
        init() throws {
            (descriptor, port) = try bindLoopbackTCP()
            #expect(listen(descriptor, 1) == 0)
        }
        deinit { close(descriptor) }
    }

    @Test func checkConfigRefusesAGroupThatDoesNotExistNamingFileLineAndKey() async throws {
        let space = try Workspace(daemonLines: ["socket_group = no-such-group-7f3a"])
        defer { space.remove() }
        let result = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(result.status == 78, "\(result.stderr)")
        let line = try space.line(of: "socket_group")
        #expect(result.stderr.contains("\(space.config):\(line): socket_group in [daemon]: \"no-such-group-7f3a\" is not a group"),
                "\(result.stderr)")
    }

    @Test func checkConfigRefusesAnAdminGroupThatDoesNotExistNamingFileLineAndKey() async throws {
        let space = try Workspace(daemonLines: ["admin_group = no-such-admins-7f3a"])
        defer { space.remove() }
        let result = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(result.status == 78, "\(result.stderr)")
        let line = try space.line(of: "admin_group")
        #expect(result.stderr.contains("\(space.config):\(line): admin_group in [daemon]: \"no-such-admins-7f3a\" is not a group"),
                "\(result.stderr)")
        // A group of this system, by name or by number, passes.
        try space.write(daemonLines: ["admin_group = root"])
        #expect(try await runTool(Self.daemon, ["--config", space.config, "--check-config"]).status == 0)
        try space.write(daemonLines: ["admin_group = 0"])
        #expect(try await runTool(Self.daemon, ["--config", space.config, "--check-config"]).status == 0)
    }

    @Test func checkConfigRefusesAMetricsAddressInUseOrNotOfThisHost() async throws {
        let busy = try BusyPort()
        let space = try Workspace(daemonLines: ["metrics_listen = 127.0.0.1:\(busy.port)"])
        defer { space.remove() }
        let inUse = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(inUse.status == 78, "\(inUse.stderr)")
        let line = try space.line(of: "metrics_listen")
        #expect(inUse.stderr.contains("\(space.config):\(line): metrics_listen in [daemon]: 127.0.0.1:\(busy.port) cannot be bound (Address already in use)"),
                "\(inUse.stderr)")
        // 192.0.2.1 (TEST-NET-1) is no address of this host.
        try space.write(daemonLines: ["metrics_listen = 192.0.2.1:9464"])
        let foreign = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(foreign.status == 78, "\(foreign.stderr)")
        #expect(foreign.stderr.contains("it is not an address of this host"), "\(foreign.stderr)")
        // A free port passes, and is free again afterwards (the check released it).
        try space.write(daemonLines: ["metrics_listen = 127.0.0.1:0"])
        let free = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(free.status == 0, "\(free.stderr)")
    }

    @Test func aCheckByHandBesideTheRunningDaemonAcceptsItsOwnMetricsAddress() async throws {
        let busy = try BusyPort()
        let space = try Workspace(daemonLines: ["metrics_listen = 127.0.0.1:\(busy.port)"])
        defer { space.remove() }
        // The daemon of this configuration holds its cache folder's lock while it runs; here
        // the test holds it, as that daemon would, beside the address in use.
        try FileManager.default.createDirectory(atPath: space.dir + "/cache", withIntermediateDirectories: true)
        let lock = open(space.dir + "/cache/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(lock >= 0)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        let beside = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(beside.status == 0, "\(beside.stderr)")
        // Without a daemon on the folder, the same address in use is a fault again.
        #expect(flock(lock, LOCK_UN) == 0)
        let alone = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(alone.status == 78, "\(alone.stderr)")
        #expect(alone.stderr.contains("Address already in use"), "\(alone.stderr)")
    }

    @Test func aMetricsBindFailureAtStartSaysWhatFailedInWords() async throws {
        let busy = try BusyPort()
        let space = try Workspace(daemonLines: ["metrics_listen = 127.0.0.1:\(busy.port)"])
        defer { space.remove() }
        // $MAINPID marks a reload's check, which leaves the running daemon's own address
        // alone: the start itself then meets the busy port, as it would after a race.
        var environment = ProcessInfo.processInfo.environment
        environment["MAINPID"] = "1"
        let result = try await runTool(Self.daemon, ["--config", space.config], environment: environment, seconds: 60)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("cannot bind 127.0.0.1:\(busy.port): Address already in use"), "\(result.stderr)")
        #expect(!result.stderr.contains("bind(descriptor"), "\(result.stderr)")
    }

    @Test(.enabled(if: getuid() == 0, "only root can write into /proc"))
    func checkConfigRefusesARootCacheOnAPseudoFileSystem() async throws {
        let space = try Workspace(cacheDir: "/proc/imagecached-cache")
        defer { space.remove() }
        let result = try await runTool(Self.daemon, ["--config", space.config, "--check-config"])
        #expect(result.status == 78, "\(result.stderr)")
        let line = try space.line(of: "cache_dir")
        #expect(result.stderr.contains("\(space.config):\(line): cache_dir in [cache]: /proc/imagecached-cache is on /proc (proc)"),
                "\(result.stderr)")
    }

    @Test func aReloadNamesItsFileAbsolutelyAndTheKeysItChanged() async throws {
        let space = try Workspace()
        defer { space.remove() }
        // Given relative, as `imagecached --config ./cache.conf` would be.
        let relative = String(repeating: "../", count: 24) + space.config.dropFirst()
        let log = space.dir + "/daemon.log"
        let daemon = try DaemonProcess(executable: Self.daemon, configPath: relative, socketPath: space.socket, logPath: log)
        do {
            await (try daemon.waitUntilReady(timeout: 60)).close()
            try space.write(daemonLines: ["log_level = debug"])
            daemon.signal(SIGHUP)
            try await FileGrowth.waitUntil(log, contains: "configuration reloaded", seconds: 30)
            let first = try #require(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                .first { $0.contains("configuration reloaded") })
            #expect(first.contains("file=\(space.config)"), "\(first)")
            #expect(first.contains("daemon.log_level") && !first.contains("no changes"), "\(first)")
            daemon.signal(SIGHUP)
            try await FileGrowth.waitUntil(log, contains: "no changes", seconds: 30)
        } catch {
            _ = await daemon.stop()
            throw error
        }
        #expect(await daemon.stop() == 0)
    }
}
