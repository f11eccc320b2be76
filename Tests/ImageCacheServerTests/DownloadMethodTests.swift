import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import Logging
import ProviderSimulator
import Testing
import TestSupport

/// `download*` through the real socket of an in-process daemon, against the simulator.
@Suite("Downloads: saving images through the socket", .timeLimit(.minutes(4)))
struct DownloadMethodTests {
    private static let body = SyntheticImages.jpeg(width: 320, height: 240, seed: 9)

    /// Runs `body` with a started daemon and a connected client; everything is cleaned up.

    @Test("a URL download ends in download.finished with a complete, verified file and no .part")
    func urlDownloadFinishes() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/photos/sunset.jpg", body: Self.body)
            let job = try await client.download(["url": fixture.images.url("/photos/sunset.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            let path = try #require(params["path"] as? String)
            #expect(path == fixture.root + "/sunset.jpg")
            #expect(params["bytes"] as? Int == Self.body.count)
            #expect(params["width"] as? Int == 320)
            #expect(params["height"] as? Int == 240)
            #expect(fixture.contents(path) == Self.body)
            #expect(fixture.files() == ["sunset.jpg"])
            let status = try await client.result("download.status", ["job": job])
            #expect(status["state"] as? String == "finished")
            #expect(status["received"] as? Int == Self.body.count)
            let list = try await client.result("download.list")
            #expect((list["jobs"] as? [[String: Any]])?.contains { $0["job"] as? String == job } == true)
        }
    }

    @Test("download.progress reports received, total and a rate while bytes flow")
    func progressIsReported() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let big = SyntheticImages.jpeg(width: 1600, height: 1200, seed: 4)
            fixture.images.serve("/big.jpg", body: big, faults: [.slowBody(bytesPerSecond: big.count)])
            let job = try await client.download(["url": fixture.images.url("/big.jpg")])
            let progress = try await client.notification("download.progress", job: job)
            #expect(progress["total"] as? Int == big.count)
            #expect((progress["received"] as? Int ?? 0) > 0)
            #expect(progress["bytesPerSecond"] is Double || progress["bytesPerSecond"] is Int)
            #expect(try await client.outcome(job: job).method == "download.finished")
        }
    }

    @Test("the name comes from the sniffed format: a PNG at an extensionless URL is saved as .png")
    func defaultNameFollowsSniffedFormat() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let png = try Corpus.bytes("pngsuite/basn2c08.png")
            fixture.images.serve("/render", body: png, contentType: "application/octet-stream")
            let job = try await client.download(["url": fixture.images.url("/render")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == fixture.root + "/render.png")
            #expect(fixture.files() == ["render.png"])
        }
    }

    @Test("a photo's regular variant is about 1080 px wide; Unsplash's tracking endpoint is requested once")
    func photoRegularVariantAndTracking() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let photo = try await firstPhoto(client)
            let id = try #require(photo["id"] as? String)
            let job = try await client.download(["photo": id, "variant": "regular"])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["width"] as? Int == min(1080, photo["width"] as? Int ?? 0))
            let name = "unsplash-" + id.dropFirst("unsplash:".count) + ".jpg"
            #expect(params["path"] as? String == fixture.root + "/" + name)
            let raw = String(id.dropFirst("unsplash:".count))
            let api = fixture.sim.api
            try await withTimeout(seconds: 30) { try await api.requestArrivals.wait { _ in !api.unsplashDownloadTracking().isEmpty } }
            #expect(fixture.sim.api.unsplashDownloadTracking() == [raw])
            let status = try await client.result("download.status", ["job": job])
            #expect(status["photo"] as? String == id)
            #expect(status["variant"] as? String == "regular")
        }
    }

    @Test("a photo's full variant is the original size, and tracking is sent once per saved photo")
    func photoFullVariant() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let photo = try await firstPhoto(client)
            let id = try #require(photo["id"] as? String)
            let raw = String(id.dropFirst("unsplash:".count))
            for round in 1...2 {
                let job = try await client.download(["photo": id])
                let (method, params) = try await client.outcome(job: job)
                #expect(method == "download.finished")
                let original = try photo.decoded(as: Photo.self), saved = try params.decoded(as: DownloadFinished.self)
                let width = try #require(original.width), height = try #require(original.height)
                #expect(saved.width == width && saved.height == height)
                let api = fixture.sim.api
                try await withTimeout(seconds: 30) { try await api.requestArrivals.wait { _ in api.unsplashDownloadTracking().count >= round } }
            }
            #expect(fixture.sim.api.unsplashDownloadTracking() == [raw, raw])
        }
    }

    @Test("a Flickr photo is saved without any Unsplash tracking request")
    func flickrPhotoNoTracking() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let photo = try await firstPhoto(client, provider: "flickr")
            let id = try #require(photo["id"] as? String)
            let job = try await client.download(["photo": id, "variant": "regular"])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect((params["path"] as? String)?.hasPrefix(fixture.root + "/flickr-") == true)
            #expect(fixture.sim.api.unsplashDownloadTracking().isEmpty)
        }
    }

    @Test("an unknown photo id is 1006 and leaves nothing behind")
    func unknownPhoto() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let answer = try await client.ask("download", ["photo": "unsplash:NOPE0000000"])
            #expect((answer["error"] as? [String: Any])?["code"] as? Int == 1006)
            #expect(fixture.files().isEmpty)
            let status = try await client.ask("download.status", ["job": "dl-unknown"])
            #expect((status["error"] as? [String: Any])?["code"] as? Int == 1006)
        }
    }

    @Test("a video is answered as one by photo.get and its download refused with 1014, before any job or file")
    func videoRefused() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let id = "flickr:\(SimulatedCatalog.flickrVideoID)"
            let photo = try await client.result("photo.get", ["photo": id])
            #expect(photo["media"] as? String == "video")
            #expect(photo["fullURL"] is NSNull)
            for variant in ["full", "regular"] {
                let answer = try await client.ask("download", ["photo": id, "variant": variant])
                let error = try #require(answer["error"] as? [String: Any], "\(answer)")
                #expect(error["code"] as? Int == 1014)
                #expect((error["data"] as? [String: Any])?["kind"] as? String == "not_a_photo")
            }
            #expect(fixture.files().isEmpty)
            let list = try await client.result("download.list")
            #expect((list["jobs"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test("directory /etc is refused with 1010")
    func outsideDirectoryRefused() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body)
            let answer = try await client.ask("download", ["url": fixture.images.url("/a.jpg"), "directory": "/etc"])
            let error = try #require(answer["error"] as? [String: Any])
            #expect(error["code"] as? Int == 1010)
            #expect((error["data"] as? [String: Any])?["kind"] as? String == "forbidden")
            let climbing = try await client.ask("download", ["url": fixture.images.url("/a.jpg"),
                                                             "directory": fixture.root + "/../.."])
            #expect((climbing["error"] as? [String: Any])?["code"] as? Int == 1010)
            #expect(fixture.images.counters.totalRequests == 0)
        }
    }

    @Test("a symlink inside the root that points out of it is refused with 1010")
    func symlinkOutRefused() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body)
            let outside = fixture.folder + "/outside"
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: fixture.root + "/escape", withDestinationPath: outside)
            let answer = try await client.ask("download", ["url": fixture.images.url("/a.jpg"),
                                                           "directory": fixture.root + "/escape"])
            #expect((answer["error"] as? [String: Any])?["code"] as? Int == 1010)
            let below = try await client.ask("download", ["url": fixture.images.url("/a.jpg"),
                                                          "directory": fixture.root + "/escape/new"])
            #expect((below["error"] as? [String: Any])?["code"] as? Int == 1010)
            #expect(fixture.files(in: outside).isEmpty)
        }
    }

    @Test("filename ../../x is sanitised into a plain name inside the folder")
    func traversalFilenameSanitised() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body)
            let job = try await client.download(["url": fixture.images.url("/a.jpg"), "filename": "../../x"])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            let path = try #require(params["path"] as? String)
            #expect(URL(fileURLWithPath: path).deletingLastPathComponent().path == fixture.root)
            #expect(!URL(fileURLWithPath: path).lastPathComponent.hasPrefix("."))
            #expect(!path.contains(".."))
            // Nothing landed beside the root (the fixture's folder holds only the daemon's own files).
            #expect(fixture.files(in: fixture.folder).allSatisfy { ["Downloads", "cache", "state"].contains($0) || $0.hasPrefix("d.sock") })
        }
    }

    @Test("a missing folder under the root is created")
    func missingSubfolderCreated() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body)
            let job = try await client.download(["url": fixture.images.url("/a.jpg"), "directory": fixture.root + "/trip/day1"])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == fixture.root + "/trip/day1/a.jpg")
        }
    }

    @Test("an existing file is never touched: the download becomes name (1).jpg, name (2).jpg")
    func existingFileUntouched() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body)
            let mine = Array("my own notes, not an image".utf8)
            try Data(mine).write(to: URL(fileURLWithPath: fixture.root + "/keep.jpg"))
            var paths: [String] = []
            for _ in 0..<2 {
                let job = try await client.download(["url": fixture.images.url("/a.jpg"), "filename": "keep.jpg"])
                let (method, params) = try await client.outcome(job: job)
                #expect(method == "download.finished")
                paths.append(params["path"] as? String ?? "")
            }
            #expect(paths == [fixture.root + "/keep (1).jpg", fixture.root + "/keep (2).jpg"])
            #expect(fixture.contents(fixture.root + "/keep.jpg") == mine)
            #expect(fixture.contents(fixture.root + "/keep (2).jpg") == Self.body)
        }
    }

    @Test("overwrite replaces the existing file only once the new one is complete")
    func overwriteReplaces() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body)
            try Data("old".utf8).write(to: URL(fileURLWithPath: fixture.root + "/keep.jpg"))
            let job = try await client.download(["url": fixture.images.url("/a.jpg"), "filename": "keep.jpg", "overwrite": true])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == fixture.root + "/keep.jpg")
            #expect(fixture.contents(fixture.root + "/keep.jpg") == Self.body)
            #expect(fixture.files() == ["keep.jpg"])
        }
    }

    @Test("the final name is reserved at once: a second job for the same name takes name (1)")
    func nameReservedAtStart() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/a.jpg", body: Self.body, faults: [.held])
            let first = try await client.download(["url": fixture.images.url("/a.jpg")])
            // The first job's name is held (placeholder + .part) while its body is held.
            try await fixture.images.waitUntil { $0.requests("/a.jpg") >= 1 }
            #expect(fixture.files().contains("a.jpg"))
            #expect(fixture.files().contains("a.jpg.part"))
            fixture.images.serve("/b/a.jpg", body: Self.body)
            let second = try await client.download(["url": fixture.images.url("/b/a.jpg")])
            let (_, params) = try await client.outcome(job: second)
            #expect(params["path"] as? String == fixture.root + "/a (1).jpg")
            fixture.images.release("/a.jpg")
            let (_, firstParams) = try await client.outcome(job: first)
            #expect(firstParams["path"] as? String == fixture.root + "/a.jpg")
        }
    }

    @Test("bytes that do not decode end in download.failed decode_failed and no file")
    func undecodableFails() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/fake.jpg", body: Array(repeating: 0x41, count: 5000))
            let job = try await client.download(["url": fixture.images.url("/fake.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.failed")
            let error = try #require(params["error"] as? [String: Any])
            #expect(error["code"] as? Int == 1008)
            #expect(fixture.files().isEmpty)
            let status = try await client.result("download.status", ["job": job])
            #expect(status["state"] as? String == "failed")
            #expect((status["error"] as? [String: Any])?["code"] as? Int == 1008)
        }
    }

    @Test("a 404 ends in download.failed not_found")
    func notFoundFails() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let job = try await client.download(["url": fixture.images.url("/missing.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.failed")
            #expect((params["error"] as? [String: Any])?["code"] as? Int == 1006)
            #expect(fixture.files().isEmpty)
        }
    }

    @Test("a stalled server ends in download.failed timeout, and no .part is left after cancel")
    func stalledServerTimesOut() async throws {
        try await DownloadFixture.withDaemon(stallTimeout: .seconds(1)) { fixture, _, client in
            let big = SyntheticImages.jpeg(width: 800, height: 600, seed: 2)
            fixture.images.serve("/stall.jpg", body: big, faults: [.stall(afterBytes: 1000)])
            let job = try await client.download(["url": fixture.images.url("/stall.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.failed")
            #expect((params["error"] as? [String: Any])?["code"] as? Int == 1011)
            let cancel = try await client.result("download.cancel", ["job": job])
            #expect(cancel["cancelled"] as? Bool == false)
            #expect(fixture.files().isEmpty)
        }
    }

    @Test("download.cancel stops a running job, tells its watchers, and removes the .part and the name")
    func cancelRemovesPart() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/held.jpg", body: Self.body, faults: [.held])
            let job = try await client.download(["url": fixture.images.url("/held.jpg")])
            try await fixture.images.waitUntil { $0.requests("/held.jpg") >= 1 }
            #expect(fixture.files() == ["held.jpg", "held.jpg.part"])
            let cancel = try await client.result("download.cancel", ["job": job])
            #expect(cancel["cancelled"] as? Bool == true)
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.failed")
            let error = try #require(params["error"] as? [String: Any])
            #expect(error["code"] as? Int == 1007)
            #expect(fixture.files().isEmpty)
            let status = try await client.result("download.status", ["job": job])
            #expect(status["state"] as? String == "cancelled")
            let again = try await client.result("download.cancel", ["job": job])
            #expect(again["cancelled"] as? Bool == false)
            fixture.images.release("/held.jpg")
        }
    }

    @Test("download.watch from another session delivers the job's notifications to it")
    func watchFromAnotherSession() async throws {
        try await DownloadFixture.withDaemon { fixture, daemon, client in
            fixture.images.serve("/w.jpg", body: Self.body, faults: [.held])
            let job = try await client.download(["url": fixture.images.url("/w.jpg")])
            let watcher = try await DownloadClient.connect(daemon.socketPath)
            let state = try await watcher.result("download.watch", ["job": job])
            #expect(["queued", "running"].contains(state["state"] as? String))
            fixture.images.release("/w.jpg")
            let (method, params) = try await watcher.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["bytes"] as? Int == Self.body.count)
            #expect(try await client.outcome(job: job).method == "download.finished")
            await watcher.close()
        }
    }

    @Test("a client that disconnects right after submitting finds the job finished when it reconnects")
    func jobOutlivesSession() async throws {
        try await DownloadFixture.withDaemon { fixture, daemon, client in
            fixture.images.serve("/gone.jpg", body: Self.body, faults: [.held])
            let job = try await client.download(["url": fixture.images.url("/gone.jpg")])
            await client.close()
            try await fixture.images.waitUntil { $0.requests("/gone.jpg") >= 1 }
            fixture.images.release("/gone.jpg")
            let again = try await DownloadClient.connect(daemon.socketPath)
            let state = try await again.result("download.watch", ["job": job])
            if state["state"] as? String != "finished" {
                #expect(try await again.outcome(job: job).method == "download.finished")
            }
            let status = try await again.result("download.status", ["job": job])
            #expect(status["state"] as? String == "finished")
            #expect(fixture.contents(fixture.root + "/gone.jpg") == Self.body)
            await again.close()
        }
    }

    @Test("daemon shutdown leaves a running job resumable; the next start resumes it (Range honoured, ignored, or refused)",
          arguments: ["honoured", "ignored", "refused"])
    func shutdownLeavesJobResumable(server: String) async throws {
        try await DownloadFixture.with { fixture in
            let big = SyntheticImages.jpeg(width: 1200, height: 900, seed: 5)
            fixture.images.serve("/r.jpg", body: big, faults: [.stall(afterBytes: 20_000), .none])
            let (job, part) = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await DownloadClient.connect(first.socketPath)
                let job = try await client.download(["url": fixture.images.url("/r.jpg")])
                let part = fixture.root + "/r.jpg.part"
                _ = try await FileGrowth.waitUntil(part, hasAtLeast: 20_000)
                await client.close()
                return (job, part)
            }
            #expect(FileGrowth.size(part) == 20_000)
            // "ignored": the server now answers every Range with a 200 and the whole body.
            // "refused": the resource is now shorter than the part, so the Range is unsatisfiable (416).
            let expected = server == "refused" ? SyntheticImages.jpeg(width: 90, height: 60, seed: 6) : big
            if server == "ignored" { fixture.images.serve("/r.jpg", body: big, ranges: .ignored) }
            if server == "refused" { fixture.images.serve("/r.jpg", body: expected) }
            try await SearchDaemon.with(fixture.configuration()) { second in
                let again = try await DownloadClient.connect(second.socketPath)
                let state = try await again.result("download.watch", ["job": job])
                if state["state"] as? String != "finished" {
                    #expect(try await again.outcome(job: job).method == "download.finished")
                }
                #expect(fixture.contents(fixture.root + "/r.jpg") == expected)
                #expect(fixture.images.counters.ranges["/r.jpg"]?.contains("bytes=20000-") == true)
                #expect(fixture.files() == ["r.jpg"])
                await again.close()
            }
        }
    }

    @Test("a job whose file was moved but whose table entry still says running is found again, not downloaded twice")
    func movedButUnrecordedJobIsFound() async throws {
        try await DownloadFixture.with { fixture in
            fixture.images.serve("/m.jpg", body: Self.body)
            let job = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await DownloadClient.connect(first.socketPath)
                let job = try await client.download(["url": fixture.images.url("/m.jpg")])
                #expect(try await client.outcome(job: job).method == "download.finished")
                await client.close()
                return job
            }
            // As if the daemon had died between the move and the table write.
            let configuration = fixture.configuration()
            let store = try DownloadJobStore(stateDirectory: configuration.resolvedStateDirectory,
                                             cacheDirectory: configuration.resolvedCacheDirectory)
            let logger = Logger(label: "test")
            try store.save(store.load(logger: logger).map { record in
                var record = record
                record.state = .running
                record.endedAt = nil
                return record
            })
            store.release()  // the next daemon takes the table's lock
            let requests = fixture.images.counters.requests("/m.jpg")
            try await SearchDaemon.with(fixture.configuration()) { second in
                let again = try await DownloadClient.connect(second.socketPath)
                let state = try await again.result("download.watch", ["job": job])
                if state["state"] as? String != "finished" {
                    #expect(try await again.outcome(job: job).method == "download.finished")
                }
                let status = try await again.result("download.status", ["job": job])
                #expect(status["path"] as? String == fixture.root + "/m.jpg")
                #expect(fixture.files() == ["m.jpg"])
                #expect(fixture.images.counters.requests("/m.jpg") == requests)
                await again.close()
            }
        }
    }

    @Test("download.list lists jobs newest first")
    func listNewestFirst() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/1.jpg", body: Self.body)
            fixture.images.serve("/2.jpg", body: Self.body)
            let a = try await client.download(["url": fixture.images.url("/1.jpg")])
            _ = try await client.outcome(job: a)
            let b = try await client.download(["url": fixture.images.url("/2.jpg")])
            _ = try await client.outcome(job: b)
            let list = try await client.result("download.list")
            let ids = (list["jobs"] as? [[String: Any]])?.compactMap { $0["job"] as? String }
            #expect(ids == [b, a])
        }
    }
}
