import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: transfers, bodies and progress", .timeLimit(.minutes(2)))
struct NetworkTransferTests {
    @Test("an image body arrives whole, in memory when small")
    func smallBodyInMemory() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/p.jpg", body: photo)
            let result = try await withTimeout(seconds: 30) {
                try await engine.start(TransferRequest(url: server.url("/p.jpg"))).result()
            }
            #expect(result.status == 200)
            #expect(result.body == .memory(photo))
            #expect(result.header("content-type") == "image/jpeg")
            #expect(server.counters.requests("/p.jpg") == 1)
        }
    }

    @Test("a body past the memory bound streams to a file")
    func largeBodyToFile() async throws {
        let big = SyntheticImages.jpeg(width: 600, height: 600, seed: 3)
        #expect(big.count > 64 << 10)
        let engine = NetworkFixture.engine(options: { $0.memoryBodyLimit = 64 << 10 })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/big.jpg", body: big)
            let result = try await withTimeout(seconds: 30) {
                try await engine.start(TransferRequest(url: server.url("/big.jpg"))).result()
            }
            guard case .file(let path, let size) = result.body else {
                Issue.record("expected a file body, got \(result.body.count) bytes in memory")
                return
            }
            defer { engine.release(result) }
            #expect(size == big.count)
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == big)
        }
    }

    @Test("a body declared past the memory bound is written to its file from the first byte")
    func declaredLargeBodyGoesToFileAtOnce() async throws {
        let big = SyntheticImages.jpeg(width: 600, height: 600, seed: 3)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bodies-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let engine = NetworkFixture.engine(options: {
            $0.memoryBodyLimit = 64 << 10
            $0.temporaryDirectory = folder
        })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            // 4 KiB arrive, far below the bound, then the server holds the rest.
            server.serve("/big.jpg", body: big, faults: [.stall(afterBytes: 4096)])
            let log = EventLog()
            let handle = engine.start(TransferRequest(url: server.url("/big.jpg")), events: log.handler)
            _ = try await withTimeout(seconds: 30) {
                await log.waitFor { if case .progress(let received, _) = $0 { received > 0 } else { false } }
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(files.count == 1 && files[0].hasPrefix("imagecached-body-"), "files: \(files)")
            handle.cancel()
            _ = await rpcError { _ = try await withTimeout(seconds: 30) { try await handle.result() } }
            // The cancelled body's file is emptied and kept for the next body, until shutdown.
            let kept = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(kept == files)
            #expect(try FileManager.default.attributesOfItem(atPath: folder + "/" + files[0])[.size] as? Int == 0)
            engine.shutdown()
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
    }

    @Test("a large body whose file cannot be created (its folder is gone) fails the transfer with storage_unavailable")
    func bodyFileUncreatable() async throws {
        let big = SyntheticImages.jpeg(width: 600, height: 600, seed: 3)
        let engine = NetworkFixture.engine(options: {
            $0.memoryBodyLimit = 64 << 10
            $0.temporaryDirectory = "/nonexistent-imagecached-\(UUID().uuidString)"
        })
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/big.jpg", body: big)
            let error = await rpcError { _ = try await withTimeout(seconds: 30) { try await engine.start(TransferRequest(url: server.url("/big.jpg"))).result() } }
            #expect(error?.kind == .storageUnavailable)
            #expect(error?.message.contains("cannot create a body file") == true, "\(String(describing: error))")
        }
    }

    @Test("progress is monotonic, at most ten per second, and ends with a final complete event")
    func progressMonotonicAndFinal() async throws {
        let body = SyntheticImages.jpeg(width: 300, height: 300, seed: 5)
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/slow.jpg", body: body, faults: [.slowBody(bytesPerSecond: body.count * 2)])
            let log = EventLog()
            let started = ContinuousClock.now
            _ = try await withTimeout(seconds: 30) {
                try await engine.start(TransferRequest(url: server.url("/slow.jpg")), events: log.handler).result()
            }
            let elapsed = ContinuousClock.now - started
            let progress = log.progress
            #expect(progress.count >= 2)
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.0 <= $1.0 })
            #expect(progress.last?.0 == body.count)
            #expect(progress.last?.1 == body.count)
            #expect(progress.dropLast().allSatisfy { $0.1 == body.count }, "\(progress)")
            // ≤ 10/s plus the final one (and one at the very start).
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(Double(progress.count) <= seconds * 10 + 2)
        }
    }

    @Test("body chunks arrive before the transfer ends, so a header can be probed early")
    func chunksBeforeEnd() async throws {
        let body = SyntheticImages.jpeg(width: 300, height: 300, seed: 6)
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/c.jpg", body: body, faults: [.stall(afterBytes: 2048)])
            let log = EventLog()
            let handle = engine.start(TransferRequest(url: server.url("/c.jpg"), deliverChunks: true), events: log.handler)
            let sawHeader = try await withTimeout(seconds: 30) {
                await log.waitFor { if case .chunk(0, let bytes) = $0 { bytes.starts(with: [0xFF, 0xD8]) } else { false } }
            }
            #expect(sawHeader)
            #expect(!handle.isFinished)
            handle.cancel()
        }
    }

    @Test("HTTPFetching returns any status with its body, and sends the configured user agent")
    func fetchReturnsStatuses() async throws {
        let engine = NetworkFixture.engine { $0.userAgent = "imagecached-test/1" }
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            let response = try await withTimeout(seconds: 30) {
                try await engine.fetch(HTTPRequest(url: server.url("/missing")))
            }
            #expect(response.status == 404)
            #expect(String(decoding: response.body, as: UTF8.self).contains("no image"))
            #expect(server.counters.lastUserAgent == "imagecached-test/1")
        }
    }

    @Test("glibc accepts the daemon's body-buffer allocator tuning")
    func allocatorTuningApplies() {
        #expect(BodyBufferAllocator.configure())
    }

    @Test("stats count requests and received bytes")
    func statsCount() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/s.jpg", body: photo)
            _ = try await withTimeout(seconds: 30) {
                try await engine.start(TransferRequest(url: server.url("/s.jpg"))).result()
            }
            let stats = engine.stats
            #expect(stats.requests == 1)
            #expect(stats.bytesReceived == photo.count)
            #expect(stats.inFlight == 0)
            #expect(stats.bytesDiscarded == 0)
        }
    }
}
