import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: Range resume of partial downloads", .timeLimit(.minutes(2)))
struct NetworkResumeTests {
    /// A partial download file holding `bytes`, removed after the test.
    private func partialFile(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "/imagecached-resume-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func resume(_ server: ImageServer, ranges: RangeSupport = .honoured, have: [UInt8], validator: String,
                        faults: [Fault] = []) async throws -> (TransferResult, String, ImageServer.Counters) {
        let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
        server.serve("/d.jpg", body: body, etag: "\"v1\"", ranges: ranges, faults: faults)
        let path = try partialFile(have)
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let request = TransferRequest(url: server.url("/d.jpg"), priority: .download,
                                      resume: .init(path: path, validator: validator))
        let result = try await withTimeout(seconds: 30) { try await engine.start(request).result() }
        return (result, path, server.counters)
    }

    @Test("a partial body continues with Range and If-Range and the file ends whole")
    func resumesWithRange() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            let (result, path, counters) = try await resume(server, have: Array(body.prefix(1000)), validator: "\"v1\"")
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(result.status == 206)
            #expect(counters.ranges["/d.jpg"] == ["bytes=1000-"])
            #expect(result.body == .file(path: path, size: body.count))
            #expect(try contents(path) == body)
        }
    }

    @Test("a changed resource (If-Range mismatch → 200) restarts the file cleanly")
    func changedResourceRestarts() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            let (result, path, _) = try await resume(server, have: Array(repeating: 7, count: 1000), validator: "\"old\"")
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(result.status == 200)
            #expect(try contents(path) == body)
        }
    }

    @Test("a server that ignores Range (200) restarts the file cleanly")
    func ignoredRangeRestarts() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            let (result, path, counters) = try await resume(server, ranges: .ignored, have: Array(body.prefix(1000)), validator: "\"v1\"")
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(result.status == 200)
            #expect(counters.requests("/d.jpg") == 1)
            #expect(try contents(path) == body)
        }
    }

    @Test("416 (a partial longer than the body) restarts cleanly without Range")
    func unsatisfiableRestarts() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            let (result, path, counters) = try await resume(server, have: Array(repeating: 1, count: body.count + 10), validator: "\"v1\"")
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(result.status == 200)
            #expect(counters.requests("/d.jpg") == 2)
            #expect(counters.ranges["/d.jpg"]?.count == 1)
            #expect(try contents(path) == body)
        }
    }

    @Test("a download cut mid-body is continued by the retry from where it stopped")
    func retryContinuesDownload() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            let (result, path, counters) = try await resume(server, have: Array(body.prefix(100)), validator: "\"v1\"",
                                                            faults: [.truncate(afterBytes: 2000), .none])
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(result.status == 206)
            // The cut answer was a whole-body 200 (the fault ignores Range), so the file restarted
            // from 0 and the retry asked for the rest after its 2000 bytes.
            #expect(counters.ranges["/d.jpg"] == ["bytes=100-", "bytes=2000-"])
            #expect(try contents(path) == body)
        }
    }

    @Test("a 206 that starts elsewhere than asked is not spliced on: the file restarts from 0 and ends whole")
    func wrongRangeRestarts() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            let (result, path, counters) = try await resume(server, have: Array(body.prefix(1000)), validator: "\"v1\"",
                                                            faults: [.wrongRange(shift: 500), .none])
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(result.status == 200)
            #expect(counters.ranges["/d.jpg"] == ["bytes=1000-"])
            #expect(counters.requests("/d.jpg") == 2)
            #expect(try contents(path) == body)
        }
    }

    @Test("an empty 206 is never a finished body: the engine restarts, then gives up with upstream_error")
    func emptyPartialFails() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            await #expect(throws: TransferError.self) {
                _ = try await resume(server, have: Array(body.prefix(1000)), validator: "\"v1\"", faults: [.emptyPartial])
            }
            #expect(server.counters.ranges["/d.jpg"] == ["bytes=1000-"])  // one range, then whole-body requests only
            #expect(server.counters.requests("/d.jpg") >= 2)
        }
    }

    @Test("the head of the answer is reported before its body: offset, total and validator")
    func responseEventReported() async throws {
        try await NetworkFixture.withServer { server in
            let body = SyntheticImages.jpeg(width: 200, height: 200, seed: 21)
            server.serve("/d.jpg", body: body, etag: "\"v1\"")
            let path = try partialFile(Array(body.prefix(1000)))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let engine = NetworkFixture.engine()
            defer { engine.shutdown() }
            let seen = LockedState<[TransferEvent]>([])
            let request = TransferRequest(url: server.url("/d.jpg"), priority: .download,
                                          resume: .init(path: path, validator: "\"v1\"", total: body.count))
            _ = try await withTimeout(seconds: 30) {
                try await engine.start(request) { event in seen.withLock { $0.append(event) } }.result()
            }
            let events = seen.withLock { $0 }
            #expect(events.first == .response(offset: 1000, total: body.count, validator: "\"v1\""))
            #expect(try contents(path) == body)
        }
    }
}
