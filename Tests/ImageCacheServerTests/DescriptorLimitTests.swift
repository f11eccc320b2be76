import DaemonChild
import Foundation
import Glibc
import ProviderSimulator
import Testing
import TestSupport

/// The real daemon at its open-file limit: started under `prlimit` with a
/// low, unraisable limit, then given more connections than it has descriptors. It must not
/// spin while idle, must answer work that needs a descriptor with `1012 busy`, and must serve
/// again once connections close.
@Suite("imagecached at its open-file limit", .serialized, .timeLimit(.minutes(3)))
struct DescriptorLimitTests {
    /// The soft and hard limit the daemon runs with: room for its own start-up descriptors
    /// (event loops, the cache index, curl) and a few dozen clients.
    static let limit = 96

    /// CPU seconds (user + system) the process has used, from /proc/<pid>/stat.
    private func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command (which may hold spaces) start after the last ')'.
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Descriptors the process has open now.
    private func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    @Test("no spin at the limit, busy for work needing a descriptor, and recovery when clients leave")
    func atTheLimit() async throws {
        let place = DaemonProcessTests.Place()
        defer { place.remove() }
        let images = try await ImageServer.start()
        images.serve("/a.jpg", body: SyntheticImages.jpeg(width: 640, height: 480, seed: 1))
        images.serve("/b.jpg", body: SyntheticImages.jpeg(width: 640, height: 480, seed: 2))
        try place.write(config: "[daemon]\nlog_level = info\n[network]\nallowed_hosts = 127.0.0.1\nallow_http = true\n")
        let daemon = try DaemonProcess(executable: URL(fileURLWithPath: "/usr/bin/prlimit"),
                                       arguments: ["--nofile=\(Self.limit):\(Self.limit)", DaemonProcess.executable.path,
                                                   "--config", place.config, "--socket", place.socket],
                                       environment: DaemonProcess.environment(home: place.folder))
        defer { daemon.kill() }
        try await daemon.waitForLog("serving")
        let pid = daemon.pid  // prlimit execs the daemon: same process

        // The first client, accepted while descriptors remain, keeps working through it all.
        let first = try await RawClient.connect(place.socket)
        #expect(try await first.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#).resultObject != nil)
        // More clients than descriptors: the kernel queues the rest in the backlog.
        var crowd: [RawClient] = []
        for _ in 0..<Self.limit {
            crowd.append(try await RawClient.connect(place.socket))
        }
        try await daemon.waitForLog("open-file limit is reached")
        #expect(openDescriptors(pid) >= Self.limit - 2)

        // Idle at the limit, with clients waiting in the backlog: the CPU it uses over a
        // window must be a small fraction of it (it was all of it, accept() retried in a loop).
        let window = 2.0
        let before = try cpuSeconds(pid)
        try await Task.sleep(for: .seconds(window))  // a measurement window, not a wait for an event
        let used = try cpuSeconds(pid) - before
        #expect(used < window * 0.2, "the daemon used \(used) s of CPU in \(window) s while idle at the fd limit")

        // A thumbnail needs a socket to the image host (and a cache file): busy, not network_unavailable.
        try await first.send(rpcLine(2, "thumbnail.show", ["slot": 1, "url": images.url("/a.jpg")]))
        let busy = try await first.answer(2).answer
        #expect(busy.errorCode == 1012 && busy.errorKind == "busy", "\(busy)")
        // By name too (curl answers "localhost" itself, so this reaches the socket, not a resolver).
        let byName = images.url("/a.jpg").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        try await first.send(rpcLine(20, "thumbnail.show", ["slot": 3, "url": byName]))
        let busyByName = try await first.answer(20).answer
        #expect(busyByName.errorCode == 1012 && busyByName.errorKind == "busy", "\(busyByName)")

        // Clients leave: the descriptors come back, the backlog is drained, work succeeds again.
        for client in crowd { await client.close() }
        crowd = []
        try await withTimeout(seconds: 60) {
            var id = 3
            while true {
                try await first.send(rpcLine(id, "thumbnail.show", ["slot": 2, "url": images.url("/b.jpg")]))
                let answer = try await first.answer(id).answer
                if answer.resultObject != nil { return }
                #expect(answer.errorCode == 1012, "\(answer)")  // only busy while the backlog drains
                id += 1
                try await Task.sleep(for: .milliseconds(200))  // a retry's pace, as a client would
            }
        }
        let late = try await RawClient.connect(place.socket)
        #expect(try await late.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#).resultObject != nil)
        await late.close()
        await first.close()
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
        await images.shutdown()
    }
}
