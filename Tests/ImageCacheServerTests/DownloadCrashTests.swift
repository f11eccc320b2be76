import DaemonChild
import Foundation
import Glibc
import ImageCacheKit
import ImageCacheServer
import ProviderSimulator
import Testing
import TestSupport

/// The real `imagecached` killed with SIGKILL in the middle of a download: the next start
/// finds the job in its table, continues the `.part` with a `Range` request, and the file
/// ends complete and correct.
@Suite("Downloads: SIGKILL mid-transfer and restart", .serialized, .timeLimit(.minutes(3)))
struct DownloadCrashTests {
    @Test("after SIGKILL mid-transfer, a restart resumes the job with Range + If-Range and the file is whole")
    func resumesAfterKill() async throws {
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let images = try await ImageServer.start()
        let body = SyntheticImages.jpeg(width: 1400, height: 1000, seed: 77)
        // A body that stops after 30000 bytes, then (after the restart) the rest: no probe request.
        images.serve("/kill.jpg", body: body, etag: "\"k1\"", faults: [.stall(afterBytes: 30_000), .none])
        let downloads = folder + "/Downloads"
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        let socket = folder + "/d.sock"
        let config = folder + "/cache.conf"
        try Data("""
            [daemon]
            socket = \(socket)
            state_dir = \(folder)/state
            [cache]
            cache_dir = \(folder)/cache
            [network]
            allowed_hosts = 127.0.0.1
            allow_http = true
            [downloads]
            download_dir = \(downloads)
            """.utf8).write(to: URL(fileURLWithPath: config))
        let environment = DaemonProcess.environment(home: folder)

        let first = try DaemonProcess(arguments: ["--config", config], environment: environment)
        defer { first.kill() }
        try await first.waitForLog("serving")
        let client = try await DownloadClient.connect(socket)
        let job = try await client.download(["url": images.url("/kill.jpg")])
        let part = downloads + "/kill.jpg.part"
        _ = try await FileGrowth.waitUntil(part, hasAtLeast: 30_000)
        // The validator reaches the job table a moment after the first body bytes reach the
        // .part (the table is written off the transfer's thread): a kill before that restarts
        // from byte 0, safely. This test is about the resume, so it kills after.
        try await FileGrowth.waitUntil(folder + "/state/" + DownloadJobStore.tableName(cacheDirectory: folder + "/cache"), contains: "k1")
        await client.close()
        first.signal(SIGKILL)
        _ = try await first.waitForExit()
        #expect(FileGrowth.size(part) == 30_000)  // a crash keeps the .part

        let second = try DaemonProcess(arguments: ["--config", config], environment: environment)
        defer { second.kill() }
        try await second.waitForLog("serving")
        let again = try await DownloadClient.connect(socket)
        let state = try await again.result("download.watch", ["job": job])
        if state["state"] as? String != "finished" {
            let (method, _) = try await again.outcome(job: job)
            #expect(method == "download.finished")
        }
        let saved = try Data(contentsOf: URL(fileURLWithPath: downloads + "/kill.jpg"))
        #expect([UInt8](saved) == body)
        #expect(images.counters.ranges["/kill.jpg"] == ["bytes=30000-"])
        #expect(images.counters.ifRanges["/kill.jpg"] == ["\"k1\""])
        #expect(images.counters.requests("/kill.jpg") == 2)
        #expect(!FileManager.default.fileExists(atPath: part))
        await again.close()
        second.signal(SIGTERM)
        _ = try await second.waitForExit()
        await images.shutdown()
    }
}
