import ImageCacheClient
import ImageCacheProtocol
import Testing
import TestSupport
@testable import ImageCacheCLI

/// The download and prefetch commands follow the daemon's notifications; these feed them the
/// notifications a daemon sends (typed as the client decodes them) and check the outcome.
@Suite("Following download and prefetch notifications", .timeLimit(.minutes(1)))
struct FollowerTests {
    let quiet = Terminal(isTTY: false, width: 100)

    @Test func downloadsEndWithTheirFinishedOrFailedNotification() async throws {
        let (stream, feed) = AsyncStream.makeStream(of: ServerNotification.self)
        feed.yield(.downloadProgress(DownloadProgress(job: "j1", received: 10, total: 100, bytesPerSecond: 50)))
        feed.yield(.downloadProgress(DownloadProgress(job: "other", received: 1, total: 2, bytesPerSecond: 1)))
        feed.yield(.downloadFailed(DownloadFailed(job: "j2", error: RPCError(.forbidden, "outside the download roots"))))
        feed.yield(.downloadFinished(DownloadFinished(job: "j1", path: "/d/a.jpg", bytes: 100, width: 40, height: 30)))
        let follower = DownloadFollower(jobs: [("unsplash:a", "j1"), ("unsplash:b", "j2")], terminal: quiet, quiet: true, socketPath: "/t.sock", socketFlag: nil)
        let outcomes = try await withTimeout(seconds: 20) { try await follower.follow(stream) }
        #expect(outcomes.map(\.job) == ["j1", "j2"])
        #expect(outcomes[0].path == "/d/a.jpg" && outcomes[0].width == 40)
        #expect(outcomes[1].error?.kind == .forbidden)
        let summary = DownloadSummary.render(outcomes)
        #expect(summary.contains("saved   /d/a.jpg (40×30, 100 B)"))
        #expect(summary.contains("failed  unsplash:b: outside the download roots [forbidden]"))
        #expect(summary.contains("1 of 2 saved"))
    }

    @Test func aConnectionThatEndsBeforeEveryDownloadEndedIsAnError() async {
        let (stream, feed) = AsyncStream.makeStream(of: ServerNotification.self)
        feed.yield(.downloadFinished(DownloadFinished(job: "j1", path: "/d/a.jpg", bytes: 1, width: 1, height: 1)))
        feed.finish()
        let follower = DownloadFollower(jobs: [("a:1", "j1"), ("a:2", "j2")], terminal: quiet, quiet: true, socketPath: "/t.sock", socketFlag: nil)
        await #expect(throws: FollowedJobsLost.self) { try await follower.follow(stream) }
    }

    static func job(_ id: String, _ state: DownloadState, received: Int = 0, total: Int? = nil, path: String? = nil,
                    error: RPCError? = nil) -> DownloadJob {
        DownloadJob(job: id, photo: "unsplash:\(id)", url: nil, variant: .full, state: state, path: path, received: received,
                    total: total, width: path == nil ? nil : 8, height: path == nil ? nil : 6, error: error,
                    createdAt: "2026-11-21T17:00:00Z")
    }

    @Test func watchingAJobThatAlreadyEndedNeedsNoNotification() async throws {
        let (stream, _) = AsyncStream.makeStream(of: ServerNotification.self)
        let follower = DownloadFollower(jobs: [FollowedJob(label: "a", job: "j1", snapshot: Self.job("j1", .finished, received: 99, total: 99, path: "/d/j1.jpg")),
                                               FollowedJob(label: "b", job: "j2", snapshot: Self.job("j2", .cancelled))],
                                        terminal: quiet, quiet: true, socketPath: "/t.sock", socketFlag: nil)
        let outcomes = try await withTimeout(seconds: 20) { try await follower.follow(stream) }
        #expect(outcomes[0].path == "/d/j1.jpg" && outcomes[0].bytes == 99 && outcomes[0].exitStatus == .success)
        #expect(outcomes[1].error?.kind == .cancelled && outcomes[1].exitStatus == .cancelled)
        #expect(DownloadSummary.render(outcomes).contains("cancelled b: "))
    }

    @Test func watchingARunningJobWaitsForItsEnd() async throws {
        let (stream, feed) = AsyncStream.makeStream(of: ServerNotification.self)
        feed.yield(.downloadProgress(DownloadProgress(job: "j1", received: 60, total: 100, bytesPerSecond: 10)))
        feed.yield(.downloadFailed(DownloadFailed(job: "j1", error: RPCError(.timeout, "stalled"))))
        let follower = DownloadFollower(jobs: [FollowedJob(label: "a", job: "j1", snapshot: Self.job("j1", .running, received: 50, total: 100))],
                                        terminal: quiet, quiet: true, socketPath: "/t.sock", socketFlag: nil)
        let outcomes = try await withTimeout(seconds: 20) { try await follower.follow(stream) }
        #expect(outcomes.map(\.exitStatus) == [.timeout])
    }

    @Test func jobTableShowsStateProgressAndPathOrError() {
        let text = DownloadJobTable.render([Self.job("j1", .running, received: 512, total: 2048),
                                            Self.job("j2", .failed, error: RPCError(.forbidden, "outside the roots")),
                                            Self.job("j3", .finished, received: 9, total: 9, path: "/d/j3.jpg")], width: 120)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("JOB") && lines[0].contains("STATE") && lines[0].contains("PATH / ERROR"))
        #expect(lines[1].contains("running") && lines[1].contains("512 B / 2.0 KiB 25%") && lines[1].contains("unsplash:j1"))
        #expect(lines[2].contains("failed") && lines[2].contains("forbidden: outside the roots"))
        #expect(lines[3].contains("finished") && lines[3].hasSuffix("/d/j3.jpg"))
        #expect(DownloadJobTable.render([], width: 80).contains("no download jobs"))
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 120 })
        #expect(lines[3].contains("finished") && lines[3].contains(" 9 B "))
    }

    @Test func aLongPathIsCutFromItsStartKeepingItsFileNameAndFolders() {
        let job = Self.job("j3", .finished, received: 9, total: 9, path: "/srv/imagecached/downloads/some/deep/folder/unsplash-abc.jpg")
        let lines = DownloadJobTable.render([job], width: 80).split(separator: "\n")
        #expect(lines[1].hasSuffix("unsplash-abc.jpg"), "\(lines[1])")
        #expect(lines[1].contains("  …/") && lines[1].contains("/folder/unsplash-abc.jpg"), "\(lines[1])")
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 80 })
    }

    @Test func jobDescriptionNamesEveryKnownField() {
        let text = DownloadJobTable.describe(Self.job("j3", .finished, received: 9, total: 9, path: "/d/j3.jpg"))
        for part in ["job       j3", "state     finished", "path      /d/j3.jpg", "pixels    8×6", "created   2026-11-21T17:00:00Z"] {
            #expect(text.contains(part), "\(part)")
        }
    }

    @Test func prefetchCountsEachPhotoOnceAndCollectsFailures() async throws {
        let (stream, feed) = AsyncStream.makeStream(of: ServerNotification.self)
        feed.yield(.prefetchFinished(PrefetchFinished(image: .photo("p:1"), ok: true)))
        feed.yield(.prefetchFinished(PrefetchFinished(image: .photo("p:1"), ok: true)))
        feed.yield(.prefetchFinished(PrefetchFinished(image: .photo("x:9"), ok: true)))
        feed.yield(.prefetchFinished(PrefetchFinished(image: .photo("p:2"), ok: false, error: RPCError(.notFound, "404"))))
        feed.yield(.prefetchFinished(PrefetchFinished(image: .photo("p:3"), ok: true)))
        let outcome = try await withTimeout(seconds: 20) {
            try await PrefetchCommand.follow(ids: ["p:1", "p:2", "p:3"], notifications: stream, json: true, socketPath: "/t.sock")
        }
        #expect(outcome.ok == 2)
        #expect(outcome.failed == ["p:2": "not_found: 404"])
    }

    @Test func prefetchOfNothingEndsAtOnce() async throws {
        let (stream, _) = AsyncStream.makeStream(of: ServerNotification.self)
        let outcome = try await withTimeout(seconds: 20) { try await PrefetchCommand.follow(ids: [], notifications: stream, json: true, socketPath: "/t.sock") }
        #expect(outcome.ok == 0 && outcome.failed.isEmpty)
    }

    @Test func cacheSummarySaysWhatWasRemoved() {
        #expect(CacheSummary.render(CacheRemovalResult(removed: 1, bytes: 2048), what: "evicted a:1") == "evicted a:1: 1 entry removed, 2.0 KiB freed")
    }
}
