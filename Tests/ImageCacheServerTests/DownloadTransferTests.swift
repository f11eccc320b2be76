import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Resumed downloads through the real socket of an in-process daemon, against a loopback
/// image server that does exactly the wrong thing asked of it: a drop mid-body is continued
/// from the `.part` with `Range` + `If-Range` (no probe request), a `206` that does not
/// continue the file restarts it from byte 0, and an empty `206` or a `416` never finishes a job.
@Suite("Downloads: resume from the .part, never a wrong range", .timeLimit(.minutes(4)))
struct DownloadTransferTests {
    private static let body = SyntheticImages.jpeg(width: 1200, height: 900, seed: 31)


    @Test("a drop mid-body resumes from the .part with Range + If-Range, no probe, and the file is the source",
          arguments: [10, 50, 99])
    func dropResumesFromPart(percent: Int) async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let cut = Self.body.count * percent / 100
            fixture.images.serve("/drop.jpg", body: Self.body, etag: "\"d1\"", faults: [.truncate(afterBytes: cut), .none])
            let job = try await client.download(["url": fixture.images.url("/drop.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["bytes"] as? Int == Self.body.count)
            #expect(fixture.contents(fixture.root + "/drop.jpg") == Self.body)
            let counters = fixture.images.counters
            #expect(counters.requests("/drop.jpg") == 2)  // the cut GET and the resumed one: no bytes=0-0 probe
            #expect(counters.ranges["/drop.jpg"] == ["bytes=\(cut)-"])
            #expect(counters.ifRanges["/drop.jpg"] == ["\"d1\""])
            #expect(fixture.files() == ["drop.jpg"])
        }
    }

    @Test("without a validator a drop restarts from byte 0 (a Range without If-Range could splice two versions)")
    func dropWithoutValidatorRestarts() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/nov.jpg", body: Self.body, etag: nil, faults: [.truncate(afterBytes: Self.body.count / 2), .none])
            let job = try await client.download(["url": fixture.images.url("/nov.jpg")])
            #expect(try await client.outcome(job: job).method == "download.finished")
            #expect(fixture.contents(fixture.root + "/nov.jpg") == Self.body)
            #expect(fixture.images.counters.requests("/nov.jpg") == 2)
            #expect(fixture.images.counters.ranges["/nov.jpg"] == nil)
        }
    }

    @Test("a 206 whose Content-Range starts elsewhere than asked restarts the file from 0; the file is the source")
    func wrongOffsetRestarts() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let cut = Self.body.count / 2
            fixture.images.serve("/shift.jpg", body: Self.body, etag: "\"s1\"",
                                 faults: [.truncate(afterBytes: cut), .wrongRange(shift: 2000), .none])
            let job = try await client.download(["url": fixture.images.url("/shift.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.finished")
            #expect(params["bytes"] as? Int == Self.body.count)
            #expect(fixture.contents(fixture.root + "/shift.jpg") == Self.body)
            let counters = fixture.images.counters
            #expect(counters.requests("/shift.jpg") == 3)  // cut, wrong range, whole body again
            #expect(counters.ranges["/shift.jpg"] == ["bytes=\(cut)-"])
        }
    }

    @Test("an empty 206 never finishes a job", arguments: ["after a drop", "from the start"])
    func emptyPartialFails(when: String) async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let faults: [Fault] = when == "after a drop" ? [.truncate(afterBytes: 5000), .emptyPartial] : [.emptyPartial]
            fixture.images.serve("/empty.jpg", body: Self.body, faults: faults)
            let job = try await client.download(["url": fixture.images.url("/empty.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.failed")
            #expect((params["error"] as? [String: Any])?["code"] as? Int == 1003)
            #expect(fixture.files().isEmpty)
            let status = try await client.result("download.status", ["job": job])
            #expect(status["state"] as? String == "failed")
        }
    }

    @Test("a 416 to the resumed range restarts from 0, and a server answering only 416 fails the job")
    func unsatisfiableNeverFinishes() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            fixture.images.serve("/r416.jpg", body: Self.body, faults: [.truncate(afterBytes: 5000), .status(416)])
            let job = try await client.download(["url": fixture.images.url("/r416.jpg")])
            #expect(try await client.outcome(job: job).method == "download.failed")
            #expect(fixture.images.counters.ranges["/r416.jpg"] == ["bytes=5000-"])
            #expect(fixture.files().isEmpty)
            // The same 416 once, then a good answer: the restarted file is the source.
            fixture.images.serve("/r416b.jpg", body: Self.body, faults: [.truncate(afterBytes: 5000), .status(416), .none])
            let again = try await client.download(["url": fixture.images.url("/r416b.jpg")])
            #expect(try await client.outcome(job: again).method == "download.finished")
            #expect(fixture.contents(fixture.root + "/r416b.jpg") == Self.body)
            #expect(fixture.images.counters.ranges["/r416b.jpg"] == ["bytes=5000-"])
        }
    }

    /// `body` with a restart marker where its entropy-coded data has none, at `fraction` of it:
    /// libjpeg stops there and warns, so it does not decode.
    private static func damaged(_ body: [UInt8], at fraction: Double) -> [UInt8] {
        var bytes = body
        let at = Int(Double(bytes.count) * fraction)
        bytes[at] = 0xFF
        bytes[at + 1] = 0xD5
        return bytes
    }

    @Test("a corrupt body fails decode_failed while it arrives: the server never sends the rest")
    func corruptBodyFailsEarly() async throws {
        try await DownloadFixture.withDaemon { fixture, _, client in
            let bad = Self.damaged(Self.body, at: 0.3)
            // About four seconds for the whole body: the verifier has all the time it needs to
            // refuse it long before its end.
            fixture.images.serve("/bad.jpg", body: bad, faults: [.slowBody(bytesPerSecond: bad.count / 4)])
            let job = try await client.download(["url": fixture.images.url("/bad.jpg")])
            let (method, params) = try await client.outcome(job: job)
            #expect(method == "download.failed")
            #expect((params["error"] as? [String: Any])?["code"] as? Int == 1008)
            try await withTimeout(seconds: 30) { try await fixture.images.waitUntil { $0.aborted("/bad.jpg") == 1 } }
            let counters = fixture.images.counters
            #expect(counters.completed("/bad.jpg") == 0)
            // Bytes the server wrote (socket buffers included): never the whole body.
            #expect(counters.abortedBytes["/bad.jpg", default: .max] < bad.count, "\(counters.abortedBytes) of \(bad.count)")
            #expect(fixture.files().isEmpty)
        }
    }

    @Test("a job resumed after a restart verifies the bytes on disk again: a .part damaged meanwhile fails before the rest is sent")
    func resumedPartIsVerifiedAgain() async throws {
        try await DownloadFixture.with { fixture in
            let cut = Self.body.count * 6 / 10
            fixture.images.serve("/again.jpg", body: Self.body, etag: "\"a1\"",
                                 faults: [.stall(afterBytes: cut), .slowBody(bytesPerSecond: Self.body.count / 8)])
            let (job, part) = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await DownloadClient.connect(first.socketPath)
                let job = try await client.download(["url": fixture.images.url("/again.jpg")])
                let part = fixture.root + "/again.jpg.part"
                _ = try await FileGrowth.waitUntil(part, hasAtLeast: cut)
                await client.close()
                return (job, part)
            }
            // Damage what is on disk (within the first 60 %) while the daemon is stopped.
            let damaged = Self.damaged(Array(fixture.contents(part)), at: 0.5)
            try Data(damaged).write(to: URL(fileURLWithPath: part))
            try await SearchDaemon.with(fixture.configuration()) { second in
                let again = try await DownloadClient.connect(second.socketPath)
                let state = try await again.result("download.watch", ["job": job])
                if state["state"] as? String != "failed" {
                    let (method, params) = try await again.outcome(job: job)
                    #expect(method == "download.failed")
                    #expect((params["error"] as? [String: Any])?["code"] as? Int == 1008)
                }
                #expect(fixture.images.counters.completed("/again.jpg") == 0)
                #expect(fixture.files().isEmpty)
                await again.close()
            }
        }
    }

    @Test("a clean stop right after download.finished leaves the job finished in the table: the next start fetches nothing again")
    func cleanStopKeepsTheFinishedState() async throws {
        try await DownloadFixture.with { fixture in
            fixture.images.serve("/kept.jpg", body: Self.body, etag: "\"k1\"")
            let (job, params) = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await DownloadClient.connect(first.socketPath)
                let job = try await client.download(["url": fixture.images.url("/kept.jpg")])
                let (method, params) = try await client.outcome(job: job)
                #expect(method == "download.finished")
                await client.close()
                // At once: the notice does not wait for the table, so only the stop's flush can make
                // the table say "finished" in time.
                return (job, params)
            }
            // The user moves the file away. Had the table still said "running", the next start
            // would find no file and fetch the image again.
            let path = try #require(params["path"] as? String)
            try FileManager.default.removeItem(atPath: path)
            try await SearchDaemon.with(fixture.configuration()) { second in
                let again = try await DownloadClient.connect(second.socketPath)
                let state = try await again.result("download.status", ["job": job])
                #expect(state["state"] as? String == "finished")
                #expect(fixture.images.counters.completed("/kept.jpg") == 1)
                await again.close()
            }
        }
    }
}
