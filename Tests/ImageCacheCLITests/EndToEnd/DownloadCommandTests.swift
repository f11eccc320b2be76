import Foundation
import ImageCacheClient
import NIOConcurrencyHelpers
import ProviderSimulator
import Testing
import TestSupport
@testable import ImageCacheCLI

/// `download` and its job subcommands: the real `imagecache` against a real daemon's
/// `download`, `download.status`, `download.list`, `download.watch` and `download.cancel`,
/// with images from a loopback server whose responses the test holds and releases.
@Suite("download against a real imagecached", .timeLimit(.minutes(5)))
struct DownloadCommandTests {
    static let body = SyntheticImages.jpeg(width: 320, height: 240, seed: 7)

    @Test func downloadSavesThePhotoAndSummarises() async throws {
        try await LiveDaemon.with { live in
            let photo = try #require(try await live.photoIDs().first)
            let result = try await live.cli(["download", photo, "-o", live.downloads, "--variant", "regular"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("\(photo): "))   // the plain progress line of a pipe, on stderr
            #expect(!result.stdout.contains("\(photo): "))
            #expect(result.stdout.contains("1 of 1 saved"), "\(result.stdout)")
            let saved = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("saved   ") })
            let path = String(saved.dropFirst(8).prefix { $0 != " " })
            #expect(path.hasPrefix(live.downloads + "/"))
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(!live.downloadedFiles().contains { $0.hasSuffix(".part") })
        }
    }

    @Test func severalImagesEachGetABarAndTheSummaryCountsThem() async throws {
        try await LiveDaemon.with { live in
            let photos = try await live.photoIDs()
            live.images.serve("/u.jpg", body: Self.body)
            let result = try await live.cli(["download", photos[1], photos[2], live.images.url("/u.jpg"), "--variant", "regular", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let outcomes = try jsonArray(result.stdout)
            #expect(outcomes.map { $0["image"] as? String } == [photos[1], photos[2], live.images.url("/u.jpg")])
            #expect(outcomes.allSatisfy { ($0["path"] as? String)?.hasPrefix(live.downloads) == true })
            #expect(live.downloadedFiles().count == 3, "\(live.downloadedFiles())")
            #expect(live.downloadedFiles().contains("u.jpg"))
        }
    }

    @Test func downloadOutsideTheRootsExits19() async throws {
        try await LiveDaemon.with { live in
            let result = try await live.cli(["download", live.images.url("/a.jpg"), "-o", live.paths.workspace + "/elsewhere"])
            #expect(result.status == 19, "\(result.stderr)")
            #expect(result.stderr.contains("download_dir"))
        }
    }

    @Test func aDownloadThatFailsExitsWithItsKind() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/missing.jpg", body: Self.body, faults: [.status(404), .status(404), .status(404)])
            let result = try await live.cli(["download", live.images.url("/missing.jpg"), "--json"])
            let outcomes = try jsonArray(result.stdout)
            let error = try #require(outcomes.first?["error"] as? [String: Any])
            let kind = try #require((error["data"] as? [String: Any])?["kind"] as? String)
            #expect(result.status == ExitStatus(kind: try #require(ErrorKind(rawValue: kind))).rawValue, "\(kind)")
            #expect(result.status != 0)
        }
    }

    @Test func aDetachedJobIsListedWatchedToItsEndAndReported() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/w.jpg", body: Self.body, faults: [.held])
            let started = try await live.cli(["download", live.images.url("/w.jpg"), "--detach", "--json"])
            #expect(started.status == 0, "\(started.stderr)")
            let job = try #require(try jsonArray(started.stdout).first?["job"] as? String)
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/w.jpg") >= 1 } }

            let status = try jsonObject(try await live.cli(["download", "status", job, "--json"]).stdout)
            #expect(status["state"] as? String == "running", "\(status)")
            let list = try await live.cli(["download", "list", "--active"])
            #expect(list.stdout.contains(job) && list.stdout.contains("running"), "\(list.stdout)")

            // watch draws its first line at once; the held body is released only then, so
            // the watch sees the job run to its end.
            let images = live.images
            let watched = try await live.cli(["download", "watch", job]) { line, _ in
                if line.contains("w.jpg") { images.release("/w.jpg") }
            }
            #expect(watched.status == 0, "\(watched.stderr)")
            #expect(watched.stdout.contains("1 of 1 saved"), "\(watched.stdout)")
            #expect(live.downloadedFiles() == ["w.jpg"])
            let ended = try jsonObject(try await live.cli(["download", "status", job, "--json"]).stdout)
            #expect(ended["state"] as? String == "finished")
        }
    }

    @Test func cancelStopsADetachedJobAndWatchThenExits16() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/c.jpg", body: Self.body, faults: [.held])
            let started = try await live.cli(["download", live.images.url("/c.jpg"), "--detach"])
            let job = try #require(started.stdout.split(separator: " ").first { $0.hasPrefix("dl-") }.map(String.init))
            // The follow-up hints keep the --socket this command was given.
            #expect(started.stderr.contains("imagecache --socket \(live.socket) download watch \(job)"), "\(started.stderr)")
            #expect(started.stderr.contains("imagecache --socket \(live.socket) download cancel \(job)"), "\(started.stderr)")
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/c.jpg") >= 1 } }
            let cancelled = try await live.cli(["download", "cancel", job])
            #expect(cancelled.status == 0, "\(cancelled.stderr)")
            #expect(cancelled.stdout.contains("\(job): cancelled"))
            #expect(live.downloadedFiles().isEmpty)
            let again = try await live.cli(["download", "cancel", job])
            #expect(again.stdout.contains("nothing to cancel") && again.stdout.contains("(cancelled)"), "\(again.stdout)")
            let watched = try await live.cli(["download", "watch", job])
            #expect(watched.status == ExitStatus.cancelled.rawValue)
            #expect(watched.stdout.contains("cancelled"))
            live.images.release("/c.jpg")
        }
    }

    @Test func ctrlCDuringWatchStopsWatchingAndLeavesTheJobRunning() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/k.jpg", body: Self.body, faults: [.held])
            let started = try await live.cli(["download", live.images.url("/k.jpg"), "--detach", "--json"])
            let job = try #require(try jsonArray(started.stdout).first?["job"] as? String)
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/k.jpg") >= 1 } }
            let interrupted = NIOLockedValueBox(false)
            let watched = try await live.cli(["download", "watch", job]) { _, pid in
                // Once: its first line means it follows the job.
                if !interrupted.withLockedValue({ was in defer { was = true }; return was }) { kill(pid, SIGINT) }
            }
            #expect(watched.status == 130, "\(watched.stderr)")
            #expect(watched.stderr.contains("the jobs go on in the daemon"))
            let status = try jsonObject(try await live.cli(["download", "status", job, "--json"]).stdout)
            #expect(status["state"] as? String == "running")
            live.images.release("/k.jpg")
            let finished = try await live.cli(["download", "watch", job])
            #expect(finished.status == 0, "\(finished.stderr)")
            #expect(live.downloadedFiles() == ["k.jpg"])
        }
    }

    @Test func anUnknownJobExits15() async throws {
        try await LiveDaemon.with { live in
            for subcommand in ["status", "watch", "cancel"] {
                let result = try await live.cli(["download", subcommand, "dl-000000000000"])
                #expect(result.status == 15, "\(subcommand): \(result.stderr)")
            }
        }
    }

    @Test func ctrlCDuringADownloadCancelsItsJobOnTheDaemon() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/i.jpg", body: Self.body, faults: [.held])
            let (pids, pidFeed) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
            let run = Task {
                try await live.cli(["download", live.images.url("/i.jpg")]) { _, pid in pidFeed.yield(pid) }
            }
            // The first progress line means the job started and the command follows it; the
            // second request reaching the image server means its body transfer is running.
            var pid: Int32 = 0
            for await first in pids { pid = first; break }
            try await withTimeout(seconds: 60) { try await live.images.waitUntil { $0.requests("/i.jpg") >= 1 } }
            #expect(kill(pid, SIGINT) == 0)
            let result = try await run.value
            #expect(result.status == 130, "\(result.stderr)")
            #expect(result.stderr.contains("cancelled 1 unfinished job"))
            let connection = try await live.connect()
            let jobs = try await connection.downloads().jobs
            await connection.close()
            #expect(jobs.map(\.state) == [.cancelled])
            #expect(live.downloadedFiles().isEmpty, "\(live.downloadedFiles())")
            live.images.release("/i.jpg")
        }
    }

    @Test func aBadPhotoBesideAGoodOneIsReportedTheGoodOneFollowedAndTheExitIsTheFailures() async throws {
        try await LiveDaemon.with { live in
            let photo = try #require(try await live.photoIDs().first)
            let bad = "unsplash:NOPE0000000"
            let result = try await live.cli(["download", photo, bad, "--variant", "regular"])
            #expect(result.status == 15, "\(result.stderr)")  // not_found, the first failure
            #expect(result.stderr.contains("\(bad): not started"), "\(result.stderr)")
            #expect(result.stdout.contains("refused \(bad)"), "\(result.stdout)")
            #expect(result.stdout.contains("1 of 2 saved"), "\(result.stdout)")
            // The started job was followed to its end: none is left running unseen.
            let connection = try await live.connect()
            let jobs = try await connection.downloads().jobs
            await connection.close()
            #expect(jobs.map(\.state) == [.finished], "\(jobs)")
            #expect(live.downloadedFiles().count == 1, "\(live.downloadedFiles())")
        }
    }

    @Test func aBadPhotoFirstDoesNotHideTheJobsStartedAfterIt() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/g.jpg", body: Self.body)
            let bad = "unsplash:NOPE0000000"
            let result = try await live.cli(["download", bad, live.images.url("/g.jpg"), "--json"])
            #expect(result.status == 15, "\(result.stderr)")
            let outcomes = try jsonArray(result.stdout)
            #expect(outcomes.map { $0["image"] as? String } == [bad, live.images.url("/g.jpg")])
            #expect(outcomes[0]["job"] == nil)
            #expect(((outcomes[0]["error"] as? [String: Any])?["code"] as? Int) == 1006)
            #expect((outcomes[1]["path"] as? String) == live.downloads + "/g.jpg")
            #expect(live.downloadedFiles() == ["g.jpg"])
        }
    }

    @Test func detachedWithABadPhotoListsTheStartedJobWithSocketHintsAndExits15() async throws {
        try await LiveDaemon.with { live in
            live.images.serve("/h.jpg", body: Self.body)
            let bad = "unsplash:NOPE0000000"
            let result = try await live.cli(["download", live.images.url("/h.jpg"), bad, "--detach"])
            #expect(result.status == 15, "\(result.stderr)")
            let job = try #require(result.stdout.split(separator: " ").first { $0.hasPrefix("dl-") }.map(String.init))
            #expect(result.stdout.contains("\(job)  \(live.images.url("/h.jpg"))"), "\(result.stdout)")
            #expect(result.stderr.contains("imagecache --socket \(live.socket) download watch \(job)"), "\(result.stderr)")
            #expect(result.stderr.contains("\(bad): not started"), "\(result.stderr)")
            let json = try await live.cli(["download", live.images.url("/h.jpg"), bad, "--detach", "--json"])
            #expect(json.status == 15)
            let entries = try jsonArray(json.stdout)
            #expect(entries.count == 2)
            #expect((entries[0]["job"] as? String)?.hasPrefix("dl-") == true)
            #expect(((entries[1]["error"] as? [String: Any])?["code"] as? Int) == 1006)
            let watched = try await live.cli(["download", "watch", job])
            #expect(watched.status == 0, "\(watched.stderr)")
        }
    }
}
