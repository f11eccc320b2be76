import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Every way an image can fail, as the pipeline reports it (docs/protocol.md, "Errors" and "Limits"), and that a
/// failure caches nothing.
@Suite("Pipeline: every error kind an image can produce", .timeLimit(.minutes(3)))
struct PipelineErrorTests {
    private func failure(_ f: PipelineFixture, _ path: String, _ body: [UInt8], faults: [Fault] = [],
                         size: Int = 256) async -> RPCError? {
        let image = f.serve(path, body, faults: faults)
        let error = await rpcError { _ = try await f.pipeline.load(ThumbnailRequest(image: image, size: size)) }
        #expect(await f.pipeline.cachedOnly(ThumbnailRequest(image: image, size: size)) == nil, "\(path) left a cache entry")
        return error
    }

    @Test("bytes that are not an image are decode_failed, stopped as soon as the first bytes say so")
    func notAnImage() async throws {
        try await PipelineFixture.with { f in
            // An endless body of noise: only the probe's early stop ends it as decode_failed
            // (reading on would end at max_image_bytes with too_large).
            let error = await failure(f, "/noise", [], faults: [.endless])
            #expect(error?.kind == .decodeFailed)
            try await withTimeout(seconds: 30) { try await f.server.waitUntil { $0.aborted("/noise") == 1 } }
        }
    }

    @Test("a decompression bomb is too_large from its header, without downloading the rest")
    func bomb() async throws {
        try await PipelineFixture.with { f in
            let bomb = try Corpus.bytes("jpeg/libjpeg-turbo-seed-corpora/github_197_poc_min.jpg")
            #expect(await failure(f, "/bomb.jpg", bomb)?.kind == .tooLarge)
        }
    }

    @Test("a truncated body is refused, not cached")
    func truncated() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 800, height: 600)
            let error = await failure(f, "/cut.jpg", body, faults: [.truncate(afterBytes: body.count / 2)])
            #expect(error != nil)
            #expect(error?.kind != .internal)
        }
    }

    @Test("a damaged image whose body completes is decode_failed with its format")
    func damaged() async throws {
        try await PipelineFixture.with { f in
            let error = await failure(f, "/broken.png", try Corpus.bytes("png/pillow/truncated_image.png"), size: 8)
            #expect(error?.kind == .decodeFailed)
            #expect(error?.data.format == "png")
        }
    }

    @Test("HTTP statuses map to not_found, rate_limited and upstream_error")
    func statuses() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 300, height: 200)
            #expect(await failure(f, "/404.jpg", body, faults: [.status(404)])?.kind == .notFound)
            let limited = await failure(f, "/429.jpg", body, faults: [.status(429, retryAfter: "120")])
            #expect(limited?.kind == .rateLimited)
            let broken = await failure(f, "/500.jpg", body, faults: [.status(500)])
            #expect(broken?.kind == .upstreamError)
        }
    }

    @Test("a redirect to a forbidden place is forbidden, and a forbidden URL is never fetched")
    func forbidden() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 300, height: 200)
            let redirected = await failure(f, "/to-file.jpg", body, faults: [.redirect(to: "file:///etc/passwd")])
            #expect(redirected?.kind == .forbidden)
            let error = await rpcError {
                _ = try await f.pipeline.load(ThumbnailRequest(image: .url("https://169.254.169.254/latest/x.jpg"), size: 64))
            }
            #expect(error?.kind == .forbidden)
        }
    }

    @Test("a stalled body is a timeout")
    func stalled() async throws {
        try await PipelineFixture.with(network: { $0.stallTimeout = .seconds(1) }, options: { $0.retry = RetryPolicy(maxRetries: 0) }) { f in
            let body = SyntheticImages.jpeg(width: 800, height: 600)
            #expect(await failure(f, "/stall.jpg", body, faults: [.stall(afterBytes: 100)])?.kind == .timeout)
        }
    }
}
