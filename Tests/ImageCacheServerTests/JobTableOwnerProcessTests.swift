import DaemonChild
import Foundation
import Glibc
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Two real `imagecached` processes of one user with their own sockets, caches and download
/// roots but one `state_dir` (the default's situation): each keeps its own job table there,
/// so neither sees, fails nor lists the other's jobs (docs/operating.md, "Configuration").
@Suite("Downloads: two daemons, one state_dir", .serialized, .timeLimit(.minutes(3)))
struct JobTableOwnerProcessTests {
    /// One daemon's places under the shared test folder.
    struct Instance {
        let name: String
        let folder: String
        var socket: String { folder + "/\(name).sock" }
        var config: String { folder + "/\(name).conf" }
        var cache: String { folder + "/cache-\(name)" }
        var downloads: String { folder + "/Downloads-\(name)" }
        var state: String { folder + "/state" }
        var table: String { state + "/" + DownloadJobStore.tableName(cacheDirectory: cache) }

        func write() throws {
            try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
            try Data("""
                [daemon]
                socket = \(socket)
                state_dir = \(state)
                [cache]
                cache_dir = \(cache)
                [network]
                allowed_hosts = 127.0.0.1
                allow_http = true
                stall_timeout = 120s
                [downloads]
                download_dir = \(downloads)
                """.utf8).write(to: URL(fileURLWithPath: config))
        }
    }

    private func jobIDs(_ client: DownloadClient) async throws -> [String] {
        let list = try await client.result("download.list")
        return (list["jobs"] as? [[String: Any]] ?? []).compactMap { $0["job"] as? String }
    }

    @Test("a running download of the first is neither seen, failed nor listed by the second, and each table stays its own")
    func separateTables() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let images = try await ImageServer.start()
        let slow = SyntheticImages.jpeg(width: 1400, height: 1000, seed: 5)
        let quick = SyntheticImages.jpeg(width: 64, height: 48, seed: 6)
        images.serve("/slow.jpg", body: slow, etag: "\"s\"", faults: [.stall(afterBytes: 20_000)])
        images.serve("/quick.jpg", body: quick)
        let a = Instance(name: "a", folder: folder)
        let b = Instance(name: "b", folder: folder)
        try a.write()
        try b.write()
        let environment = DaemonProcess.environment(home: folder)

        let first = try DaemonProcess(arguments: ["--config", a.config], environment: environment)
        defer { first.kill() }
        try await first.waitForLog("serving")
        let clientA = try await DownloadClient.connect(a.socket)
        let running = try await clientA.download(["url": images.url("/slow.jpg")])
        _ = try await FileGrowth.waitUntil(a.downloads + "/slow.jpg.part", hasAtLeast: 20_000)
        try await FileGrowth.waitUntil(a.table, contains: running)

        let second = try DaemonProcess(arguments: ["--config", b.config], environment: environment)
        defer { second.kill() }
        try await second.waitForLog("serving")
        // Each names its own table in its start-up line (logged just after "serving").
        try await first.waitForLog("job_table=\(a.table)", timeout: 30)
        try await second.waitForLog("job_table=\(b.table)", timeout: 30)
        let clientB = try await DownloadClient.connect(b.socket)
        // The second has nothing of the first's: not listed, not known by id.
        #expect(try await jobIDs(clientB).isEmpty)
        let unknown = try await clientB.ask("download.status", ["job": running])
        #expect((unknown["error"] as? [String: Any])?["code"] as? Int != nil, "\(unknown)")
        #expect(((unknown["error"] as? [String: Any])?["data"] as? [String: Any])?["kind"] as? String == "not_found")
        let own = try await clientB.download(["url": images.url("/quick.jpg")])
        #expect(try await clientB.outcome(job: own).method == "download.finished")
        #expect(try await jobIDs(clientB) == [own])
        // The only line of the second naming the first's job is its own refusal of that status request.
        let mentions = second.log.filter { $0.contains(running) }
        #expect(mentions.count == 1 && mentions.allSatisfy { $0.contains("not_found") }, "\(mentions)")
        #expect(!second.log.contains { $0.contains("resuming downloads") })

        // The first still runs its job and lists only it; its table was not rewritten by the second.
        let status = try await clientA.result("download.status", ["job": running])
        #expect(status["state"] as? String == "running", "\(status)")
        #expect(try await jobIDs(clientA) == [running])
        let tableA = try String(contentsOfFile: a.table, encoding: .utf8)
        let tableB = try String(contentsOfFile: b.table, encoding: .utf8)
        #expect(tableA.contains(running) && !tableA.contains(own) && !tableA.contains("\"failed\""))
        #expect(tableB.contains(own) && !tableB.contains(running))

        // --check-config beside both running daemons still answers ok.
        let check = try DaemonProcess(arguments: ["--config", a.config, "--check-config"], environment: environment)
        defer { check.kill() }
        #expect(try await check.waitForExit() == 0)

        await clientA.close()
        await clientB.close()
        first.signal(SIGTERM)
        second.signal(SIGTERM)
        #expect(try await first.waitForExit() == 0)
        #expect(try await second.waitForExit() == 0)
        await images.shutdown()
    }

    @Test("a daemon whose job table another process holds refuses to start: exit 1, naming the table and state_dir")
    func heldTableRefused() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let a = Instance(name: "a", folder: folder)
        try a.write()
        try FileManager.default.createDirectory(atPath: a.cache, withIntermediateDirectories: true)
        // This test process holds the table, as a daemon of the same cache folder in another
        // mount namespace would.
        let holder = try DownloadJobStore(stateDirectory: a.state, cacheDirectory: a.cache)
        defer { holder.release() }
        let daemon = try DaemonProcess(arguments: ["--config", a.config], environment: DaemonProcess.environment(home: folder))
        defer { daemon.kill() }
        #expect(try await daemon.waitForExit() == 1, "\(daemon.log)")
        #expect(daemon.log.contains { $0.contains("the download job table \(a.table) is in use") && $0.contains("state_dir") },
                "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: a.socket))
        // The refused start released the cache folder: with the table free the daemon starts.
        holder.release()
        let next = try DaemonProcess(arguments: ["--config", a.config], environment: DaemonProcess.environment(home: folder))
        defer { next.kill() }
        try await next.waitForLog("serving")
        next.signal(SIGTERM)
        #expect(try await next.waitForExit() == 0)
    }
}
