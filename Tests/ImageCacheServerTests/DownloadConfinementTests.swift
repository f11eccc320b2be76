import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Downloads through the real socket: a saved photo never lands outside the
/// download roots whatever is swapped while the job runs or while the daemon is stopped, one
/// job never clobbers another's names, and names say what they are.
///
/// Every image request is held (`.held`) until the test has made its swap, so "the job is
/// running" holds however slow the machine is, with or without a request before the body.
@Suite("Downloads: confined to the roots, never clobbering, honest names", .timeLimit(.minutes(4)))
struct DownloadConfinementTests {
    private static let body = SyntheticImages.jpeg(width: 320, height: 240, seed: 31)
    private static let other = SyntheticImages.jpeg(width: 200, height: 100, seed: 32)


    /// A folder outside every root, with one file in it the daemon must never touch.
    private func makeOutside(_ fixture: DownloadFixture) throws -> String {
        let outside = fixture.folder + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside + "/target.jpg"))
        return outside
    }

    private func expectUntouched(_ fixture: DownloadFixture, _ outside: String) {
        #expect(fixture.files(in: outside) == ["target.jpg"])
        #expect(fixture.contents(outside + "/target.jpg") == Array("precious".utf8))
    }

    /// The job's end, which must be `download.failed` with 1010; its message.
    private func expectForbidden(_ client: DownloadClient, job: String) async throws -> String {
        let (method, params) = try await client.outcome(job: job)
        #expect(method == "download.failed")
        let error = try #require(params["error"] as? [String: Any])
        #expect(error["code"] as? Int == 1010, "\(error)")
        return error["message"] as? String ?? ""
    }

    /// After a restart: the job's final state through `download.watch` (its end if it had
    /// not ended yet), which must be failed with 1010; its error message.
    private func expectFailedAfterRestart(_ client: DownloadClient, job: String) async throws -> String {
        let state = try await client.result("download.watch", ["job": job])
        if ["queued", "running"].contains(state["state"] as? String) {
            return try await expectForbidden(client, job: job)
        }
        #expect(state["state"] as? String == "failed", "\(state)")
        let error = try #require(state["error"] as? [String: Any])
        #expect(error["code"] as? Int == 1010, "\(error)")
        return error["message"] as? String ?? ""
    }

    @Test("(a) the folder renamed and replaced by a symlink to outside while the job runs: 1010, nothing outside")
    func folderSwappedWhileRunning() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let outside = try makeOutside(fixture)
            fixture.images.serve("/a.jpg", body: Self.body, faults: [.held])
            let job = try await client.download(["url": fixture.images.url("/a.jpg"), "directory": fixture.root + "/trip"])
            try await withTimeout(seconds: 60) { try await fixture.images.waitUntil { $0.requests("/a.jpg") >= 1 } }
            try FileManager.default.moveItem(atPath: fixture.root + "/trip", toPath: fixture.root + "/trip-moved")
            try FileManager.default.createSymbolicLink(atPath: fixture.root + "/trip", withDestinationPath: outside)
            fixture.images.release("/a.jpg")
            let message = try await expectForbidden(client, job: job)
            #expect(message.contains("symbolic link"), "\(message)")
            expectUntouched(fixture, outside)
            // What the job left in the folder it held is cleaned up there.
            #expect(fixture.files(in: fixture.root + "/trip-moved").isEmpty)
        }
    }

    @Test("(d) the .part replaced by a symlink to an outside file while the job runs: 1010, the file untouched")
    func partSwappedWhileRunning() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let outside = try makeOutside(fixture)
            fixture.images.serve("/d.jpg", body: Self.body, faults: [.held])
            let job = try await client.download(["url": fixture.images.url("/d.jpg")])
            try await withTimeout(seconds: 60) { try await fixture.images.waitUntil { $0.requests("/d.jpg") >= 1 } }
            let part = fixture.root + "/d.jpg.part"
            try FileManager.default.removeItem(atPath: part)
            try FileManager.default.createSymbolicLink(atPath: part, withDestinationPath: outside + "/target.jpg")
            fixture.images.release("/d.jpg")
            let message = try await expectForbidden(client, job: job)
            #expect(message.contains("symbolic link"), "\(message)")
            expectUntouched(fixture, outside)
            #expect(fixture.files().isEmpty, "\(fixture.files())")  // the link itself removed, not its target
        }
    }

    @Test("(b) the folder swapped for a symlink while the daemon is stopped: the resumed job fails 1010, nothing outside")
    func folderSwappedWhileStopped() async throws {
        try await DownloadFixture.with { fixture in
            let outside = try makeOutside(fixture)
            fixture.images.serve("/b.jpg", body: Self.body, faults: [.held])
            let job = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await DownloadClient.connect(first.socketPath)
                let job = try await client.download(["url": fixture.images.url("/b.jpg"), "directory": fixture.root + "/trip"])
                try await withTimeout(seconds: 60) { try await fixture.images.waitUntil { $0.requests("/b.jpg") >= 1 } }
                await client.close()
                return job
            }
            #expect(fixture.files(in: fixture.root + "/trip").contains("b.jpg.part"))
            try FileManager.default.moveItem(atPath: fixture.root + "/trip", toPath: fixture.root + "/trip-moved")
            try FileManager.default.createSymbolicLink(atPath: fixture.root + "/trip", withDestinationPath: outside)
            fixture.images.release("/b.jpg")
            try await SearchDaemon.with(fixture.configuration()) { second in
                let again = try await DownloadClient.connect(second.socketPath)
                let message = try await expectFailedAfterRestart(again, job: job)
                #expect(message.contains("symbolic link"), "\(message)")
                expectUntouched(fixture, outside)
                await again.close()
            }
        }
    }

    @Test("(c) a job started under root A, resumed with a configuration listing only root B: 1010, A and B untouched")
    func rootRemovedFromConfiguration() async throws {
        try await DownloadFixture.with { fixture in
            fixture.images.serve("/c.jpg", body: Self.body, faults: [.held])
            let job = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await DownloadClient.connect(first.socketPath)
                let job = try await client.download(["url": fixture.images.url("/c.jpg")])
                try await withTimeout(seconds: 60) { try await fixture.images.waitUntil { $0.requests("/c.jpg") >= 1 } }
                await client.close()
                return job
            }
            let leftA = fixture.files()
            #expect(leftA.contains("c.jpg.part"))
            fixture.images.release("/c.jpg")
            let rootB = fixture.folder + "/OtherRoot"
            try FileManager.default.createDirectory(atPath: rootB, withIntermediateDirectories: true)
            var configuration = fixture.configuration()
            configuration.downloads.downloadDir = [rootB]
            try await SearchDaemon.with(configuration) { second in
                let again = try await DownloadClient.connect(second.socketPath)
                let message = try await expectFailedAfterRestart(again, job: job)
                #expect(message.contains("outside the download roots"), "\(message)")
                #expect(message.contains("left where it is"), "\(message)")
                // Nothing is written (or removed) in a folder the configuration no longer allows.
                #expect(fixture.files() == leftA)
                #expect(fixture.contents(fixture.root + "/c.jpg.part").isEmpty)
                #expect(fixture.files(in: rootB).isEmpty)
                await again.close()
            }
        }
    }

    @Test("(item 3) a job asking for another's .part is refused by the name rules; overwrite of a held name is 1010")
    func oneJobNeverClobbersAnother() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/victim.jpg", body: Self.body, faults: [.held])
            fixture.images.serve("/attacker.jpg", body: Self.other)
            let victim = try await client.download(["url": fixture.images.url("/victim.jpg"), "filename": "victim.jpg"])
            try await withTimeout(seconds: 60) { try await fixture.images.waitUntil { $0.requests("/victim.jpg") >= 1 } }
            let part = try await client.ask("download", ["url": fixture.images.url("/attacker.jpg"),
                                                         "filename": "victim.jpg.part", "overwrite": true])
            let partError = try #require(part["error"] as? [String: Any])
            #expect(partError["code"] as? Int == -32602)
            #expect((partError["data"] as? [String: Any])?["field"] as? String == "filename")
            let name = try await client.ask("download", ["url": fixture.images.url("/attacker.jpg"),
                                                         "filename": "victim.jpg", "overwrite": true])
            let nameError = try #require(name["error"] as? [String: Any])
            #expect(nameError["code"] as? Int == 1010, "\(nameError)")
            #expect(fixture.images.counters.requests("/attacker.jpg") == 0)
            fixture.images.release("/victim.jpg")
            let (method, params) = try await client.outcome(job: victim)
            #expect(method == "download.finished")
            #expect(params["path"] as? String == fixture.root + "/victim.jpg")
            #expect(fixture.contents(fixture.root + "/victim.jpg") == Self.body)
            #expect(fixture.files() == ["victim.jpg"])
        }
    }

    @Test("(item 4) names: bidi refused with -32602, NFD saved as NFC and numbered beside it, trailing dots trimmed")
    func honestNames() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/n.jpg", body: Self.body)
            let bidi = try await client.ask("download", ["url": fixture.images.url("/n.jpg"), "filename": "\u{202E}gpj.exe"])
            let error = try #require(bidi["error"] as? [String: Any])
            #expect(error["code"] as? Int == -32602)
            #expect((error["data"] as? [String: Any])?["field"] as? String == "filename")
            var paths: [String] = []
            for name in ["e\u{301}.jpg", "\u{E9}.jpg", "dots.jpg. ."] {
                let job = try await client.download(["url": fixture.images.url("/n.jpg"), "filename": name])
                let (method, params) = try await client.outcome(job: job)
                #expect(method == "download.finished")
                paths.append(params["path"] as? String ?? "")
            }
            #expect(paths.map { Array($0.utf8) } == [fixture.root + "/\u{E9}.jpg", fixture.root + "/\u{E9} (1).jpg",
                                                      fixture.root + "/dots.jpg"].map { Array($0.utf8) })
            let names = try FileManager.default.contentsOfDirectory(atPath: fixture.root).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            #expect(names == ["dots.jpg", "\u{E9} (1).jpg", "\u{E9}.jpg"].map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
            #expect(fixture.images.counters.requests("/n.jpg") >= 3)
        }
    }
}
