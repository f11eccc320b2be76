import DaemonChild
import Foundation
import Glibc
import ImageCacheServer
import ProviderSimulator
import Testing
import TestSupport

/// The real `imagecached` process: start-up, signals, systemd integration (docs/protocol.md, "Transport").
@Suite("imagecached process", .serialized, .timeLimit(.minutes(3)))
struct DaemonProcessTests {
    /// A folder with a socket path and a home for the child.
    struct Place {
        let folder = TestServer.makeFolder()
        var socket: String { folder + "/d.sock" }
        var config: String { folder + "/cache.conf" }

        func write(config text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: config))
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    private func hello(_ socket: String) async throws -> [String: Any] {
        let client = try await RawClient.connect(socket)
        let answer = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
        await client.close()
        return try #require(answer.resultObject)
    }

    private func configured(_ hello: [String: Any]) -> [String: Bool] {
        let providers = hello["providers"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: providers.map { ($0["name"] as! String, $0["configured"] as! Bool) })
    }

    @Test("it serves on its socket, reports READY=1 and STOPPING=1, and exits 0 on SIGTERM, removing its socket", arguments: [SIGTERM, SIGINT])
    func readyAndStop(signal: Int32) async throws {
        let place = Place()
        defer { place.remove() }
        let notify = try NotifySocket(abstract: true)
        let daemon = try DaemonProcess(arguments: ["--socket", place.socket],
                                       environment: DaemonProcess.environment(home: place.folder, extra: ["NOTIFY_SOCKET": notify.address]))
        defer { daemon.kill() }
        let ready = try #require(try await notify.receive())
        #expect(ready.split(separator: "\n").contains("READY=1"))
        #expect(ready.contains("STATUS=Serving on \(place.socket)"))
        #expect(try await hello(place.socket)["name"] as? String == "imagecached")

        let client = try await RawClient.connect(place.socket)
        let stats = try #require(try await client.call(#"{"jsonrpc":"2.0","id":2,"method":"stats"}"#).resultObject)
        // Every section of the contract's stats, each measured by its owner.
        #expect(Set(stats.keys) == ["memory", "disk", "network", "providers", "sessions", "uptimeSeconds"])
        // This client, and possibly the previous one if its close is still being processed.
        #expect((1...2).contains(stats["sessions"] as? Int ?? 0))
        await client.close()

        daemon.signal(signal)
        // Heartbeat STATUS= lines may come first; STOPPING=1 must come within a bounded number.
        var stopping = ""
        for _ in 0..<20 {
            stopping = try #require(try await notify.receive())
            if stopping.split(separator: "\n").contains("STOPPING=1") { break }
        }
        #expect(stopping.split(separator: "\n").contains("STOPPING=1"))
        #expect(try await daemon.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: place.socket))
        // A clean exit leaves no lock file beside the socket.
        #expect(!FileManager.default.fileExists(atPath: place.socket + ".lock"))
        // One line per event, with a timestamp and a level, and no colour on a pipe.
        #expect(daemon.log.allSatisfy { !$0.contains("\u{1B}[") })
        #expect(daemon.log.contains { $0.contains(" notice imagecached: serving") })
        #expect(daemon.log.contains { $0.contains("client connected") && $0.contains("peer_uid=\(getuid())") && $0.contains("peer_pid=") })
    }

    @Test("with WatchdogSec= it pings WATCHDOG=1 from its event loop with a live STATUS= line")
    func watchdogAndStatus() async throws {
        let place = Place()
        defer { place.remove() }
        let notify = try NotifySocket(abstract: true)
        // WATCHDOG_PID is left out: systemd sets it only when the variable could be inherited.
        let daemon = try DaemonProcess(arguments: ["--socket", place.socket], environment: DaemonProcess.environment(
            home: place.folder, extra: ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "200000"]))
        defer { daemon.kill() }
        let ready = try #require(try await notify.receive())
        #expect(ready.split(separator: "\n").contains("READY=1"))
        let client = try await RawClient.connect(place.socket)
        _ = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
        // Pings come every 100 ms (half the watchdog); one names the session just opened.
        var beats = 0
        var sawSession = false
        for _ in 0..<50 where !(beats >= 3 && sawSession) {
            let beat = try #require(try await notify.receive())
            let fields = beat.split(separator: "\n")
            #expect(fields.contains("WATCHDOG=1"))
            #expect(fields.contains { $0.hasPrefix("STATUS=Serving on \(place.socket): ") })
            beats += 1
            if beat.contains(": 1 session,") { sawSession = true }
        }
        #expect(beats >= 3)
        #expect(sawSession)
        await client.close()
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    @Test("a failed request is logged at info with its kind, code and duration, as logfmt")
    func failedRequestLogged() async throws {
        let place = Place()
        defer { place.remove() }
        let daemon = try DaemonProcess(arguments: ["--socket", place.socket, "--log-level", "info"],
                                       environment: DaemonProcess.environment(home: place.folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        let client = try await RawClient.connect(place.socket)
        let answer = try await client.call(#"{"jsonrpc":"2.0","id":7,"method":"download.status","params":{"job":"dl-nope"}}"#)
        #expect(answer.errorCode == 1006)
        await client.close()
        try await daemon.waitForLog("request failed")
        let line = try #require(daemon.log.first { $0.contains("request failed") })
        #expect(line.contains(" info imagecached: request failed "))
        #expect(line.contains("kind=not_found") && line.contains("code=1006") && line.contains("method=download.status") && line.contains("request=7"))
        #expect(line.range(of: #"duration_ms=\d+"#, options: .regularExpression) != nil)
        #expect(line.contains(#"error=""#))  // a message with spaces is quoted
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    @Test("a WATCHDOG_USEC meant for another process, zero or garbage, schedules no ping")
    func watchdogForOthers() {
        #expect(SystemdHeartbeat.watchdogInterval(environment: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"], pid: 2) == nil)
        #expect(SystemdHeartbeat.watchdogInterval(environment: ["WATCHDOG_USEC": "0"], pid: 2) == nil)
        #expect(SystemdHeartbeat.watchdogInterval(environment: ["WATCHDOG_USEC": "1e9"], pid: 2) == nil)
        #expect(SystemdHeartbeat.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "2"], pid: 2) == .seconds(30))
        #expect(SystemdHeartbeat.watchdogInterval(environment: ["WATCHDOG_USEC": "\(Int64.max)"], pid: 2) == .hours(24))
    }

    @Test("a cache_dir that cannot be used stops start-up with 78, naming the key, before the socket exists")
    func unusableCacheFolder() async throws {
        let place = Place()
        defer { place.remove() }
        let blocker = place.folder + "/not-a-folder"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        try place.write(config: "[cache]\ncache_dir = \(blocker)/cache\n")
        let daemon = try DaemonProcess(arguments: ["--config", place.config, "--socket", place.socket],
                                       environment: DaemonProcess.environment(home: place.folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("\(place.config): cache_dir in [cache]: \(blocker)/cache cannot be created: \(blocker) is not a folder")
        #expect(try await daemon.waitForExit() == 78)
        #expect(!FileManager.default.fileExists(atPath: place.socket))
    }

    @Test("a second daemon on the same socket exits non-zero with a clear message, and the first keeps serving")
    func socketInUse() async throws {
        let place = Place()
        defer { place.remove() }
        let first = try DaemonProcess(arguments: ["--socket", place.socket], environment: DaemonProcess.environment(home: place.folder))
        defer { first.kill() }
        try await first.waitForLog("serving")
        // Another home, so another cache folder: only the socket is shared.
        let otherHome = Place()
        defer { otherHome.remove() }
        let second = try DaemonProcess(arguments: ["--socket", place.socket], environment: DaemonProcess.environment(home: otherHome.folder))
        defer { second.kill() }
        let status = try await second.waitForExit()
        #expect(status != 0)
        #expect(second.log.contains { $0.contains("already serving on \(place.socket)") })
        #expect(try await hello(place.socket)["protocol"] as? Int == 1)
        first.signal(SIGTERM)
        #expect(try await first.waitForExit() == 0)
    }

    @Test("a second daemon on the same cache_dir exits non-zero naming the folder, and the first keeps serving")
    func cacheFolderInUse() async throws {
        let place = Place()
        defer { place.remove() }
        let first = try DaemonProcess(arguments: ["--socket", place.socket], environment: DaemonProcess.environment(home: place.folder))
        defer { first.kill() }
        try await first.waitForLog("serving")
        let otherSocket = place.folder + "/other.sock"
        let second = try DaemonProcess(arguments: ["--socket", otherSocket], environment: DaemonProcess.environment(home: place.folder))
        defer { second.kill() }
        let status = try await second.waitForExit()
        #expect(status != 0)
        #expect(second.log.contains { $0.contains("\(place.folder)/cache/imagecached") && $0.contains("only one imagecached may use a cache_dir") })
        #expect(!FileManager.default.fileExists(atPath: otherSocket))
        #expect(try await hello(place.socket)["protocol"] as? Int == 1)
        first.signal(SIGTERM)
        #expect(try await first.waitForExit() == 0)
    }

    @Test("a stale socket file left by a dead daemon is replaced")
    func staleSocket() async throws {
        let place = Place()
        defer { place.remove() }
        let killed = try DaemonProcess(arguments: ["--socket", place.socket], environment: DaemonProcess.environment(home: place.folder))
        try await killed.waitForLog("serving")
        killed.signal(SIGKILL)
        _ = try await killed.waitForExit()
        #expect(try SocketBinder.probe(path: place.socket) == .stale)

        let daemon = try DaemonProcess(arguments: ["--socket", place.socket], environment: DaemonProcess.environment(home: place.folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        #expect(daemon.log.contains { $0.contains("removed a stale socket") })
        #expect(try await hello(place.socket)["name"] as? String == "imagecached")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    @Test("SIGHUP with a good file applies it; with a bad file it is reported and the running configuration kept")
    func reload() async throws {
        let place = Place()
        defer { place.remove() }
        try place.write(config: "[daemon]\nlog_level = info\n")
        let daemon = try DaemonProcess(arguments: ["--config", place.config, "--socket", place.socket],
                                       environment: DaemonProcess.environment(home: place.folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        #expect(configured(try await hello(place.socket))["flickr"] == false)

        try place.write(config: "[daemon]\nlog_level = info\n[cache]\nmemory_limit = 3MiB\n[providers.flickr]\napi_key = \"reload-secret-1\"\n")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("configuration reloaded")
        #expect(configured(try await hello(place.socket))["flickr"] == true)
        // Limits apply at once: the memory tier's limit in stats is the new one.
        let client = try await RawClient.connect(place.socket)
        let stats = try #require(try await client.call(#"{"jsonrpc":"2.0","id":2,"method":"stats"}"#).resultObject)
        await client.close()
        #expect((stats["memory"] as? [String: Any])?["limit"] as? Int == 3 << 20)

        try place.write(config: "[daemon]\nno_such_key = 1\n[providers.flickr]\napi_key = \"\"\n")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("configuration reload failed")
        #expect(daemon.log.contains { $0.contains("reload failed") && $0.contains("cache.conf:2") })
        // The running configuration (with the key) is kept.
        #expect(configured(try await hello(place.socket))["flickr"] == true)

        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
        #expect(!daemon.log.contains { $0.contains("reload-secret-1") })
    }

    @Test("SIGHUP applies [network] too: a host the reload allows is fetched from then on")
    func reloadAppliesNetworkPolicy() async throws {
        let place = Place()
        defer { place.remove() }
        let images = try await ImageServer.start()
        defer { Task { await images.shutdown() } }
        images.serve("/r.jpg", body: SyntheticImages.jpeg(width: 300, height: 200, seed: 3))
        try place.write(config: "[daemon]\nlog_level = info\n")
        let daemon = try DaemonProcess(arguments: ["--config", place.config, "--socket", place.socket],
                                       environment: DaemonProcess.environment(home: place.folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        let show = { (id: Int) async throws -> [String: Any] in
            let client = try await RawClient.connect(place.socket)
            let answer = try await client.ask(id, "thumbnail.show", ["slot": id, "url": images.url("/r.jpg"), "size": 100])
            await client.close()
            return answer
        }
        // Loopback over plain HTTP is refused by default, before any request is made.
        #expect(try await show(1).errorCode == 1010)
        #expect(images.counters.requests("/r.jpg") == 0)

        try place.write(config: "[daemon]\nlog_level = info\n[network]\nallowed_hosts = 127.0.0.1\nallow_http = true\n")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("configuration reloaded")
        let shown = try await show(2)
        #expect(shown.resultObject?["width"] as? Int == 100, "\(shown)")

        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    @Test("under systemd socket activation it serves on the inherited socket and leaves the socket file to systemd")
    func socketActivation() async throws {
        let place = Place()
        defer { place.remove() }
        let activator = try DaemonProcess(
            executable: URL(fileURLWithPath: "/usr/bin/systemd-socket-activate"),
            arguments: ["-l", place.socket, DaemonProcess.executable.path, "--socket", place.folder + "/unused.sock"],
            environment: DaemonProcess.environment(home: place.folder))
        defer { activator.kill() }
        try await activator.waitForLog("Listening on")
        // The first connection makes systemd-socket-activate exec the daemon with fd 3.
        #expect(try await hello(place.socket)["name"] as? String == "imagecached")
        try await activator.waitForLog("using the socket passed by systemd")
        #expect(!FileManager.default.fileExists(atPath: place.folder + "/unused.sock"))
        activator.signal(SIGTERM)
        #expect(try await activator.waitForExit() == 0)
        // systemd owns the socket file; the daemon does not remove it.
        #expect(FileManager.default.fileExists(atPath: place.socket))
    }
}
