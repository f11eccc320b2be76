import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Every way an image can fail, as it reaches a client of `thumbnail.show`: the pipeline maps
/// each to the contract's kind, and this checks the code and kind on the wire.
@Suite("Thumbnail errors on the socket", .timeLimit(.minutes(5)))
struct ThumbnailErrorTests {
    private func expectError(_ answer: [String: Any], code: Int, kind: String, _ what: String) {
        #expect(answer.errorCode == code, "\(what): \(answer)")
        #expect(answer.errorKind == kind, "\(what): \(answer)")
    }

    private func request(_ f: ThumbnailFixture, _ client: RawClient, id: Int, path: String) async throws {
        try await client.send(rpcLine(id, "thumbnail.show", ["slot": id, "url": f.images.url(path)]))
    }

    @Test("not an image is 1008 decode_failed")
    func notAnImage() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            f.images.serve("/text.jpg", body: Array("<html>not a picture</html>".utf8), contentType: "text/html")
            try await request(f, client, id: 1, path: "/text.jpg")
            expectError(try await client.answer(1).answer, code: 1008, kind: "decode_failed", "html body")
            await client.close()
        }
    }

    @Test("a decompression bomb is too_large")
    func bomb() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            f.images.serve("/bomb.jpg", body: try Corpus.bytes("jpeg/libjpeg-turbo-seed-corpora/github_197_poc_min.jpg"))
            try await request(f, client, id: 1, path: "/bomb.jpg")
            let answer = try await client.answer(1).answer
            #expect(answer.errorKind == "too_large", "\(answer)")
            #expect(answer.errorCode == 1009)
            await client.close()
        }
    }

    @Test("a truncated body is an error, never a result")
    func truncated() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(width: 800, height: 600)
            f.images.serve("/cut.jpg", body: body, faults: [.truncate(afterBytes: body.count / 2)])
            try await request(f, client, id: 1, path: "/cut.jpg")
            let answer = try await client.answer(1, timeout: 120).answer
            #expect(answer.resultObject == nil)
            #expect(answer.errorCode != nil && answer.errorKind != "internal", "\(answer)")
            await client.close()
        }
    }

    @Test("404 is not_found, 429 rate_limited with its delay, 5xx upstream_error")
    func statuses() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(width: 300, height: 200)
            f.images.serve("/404.jpg", body: body, faults: [.status(404)])
            f.images.serve("/429.jpg", body: body, faults: [.status(429, retryAfter: "120")])
            f.images.serve("/503.jpg", body: body, faults: [.status(503)])
            try await request(f, client, id: 1, path: "/404.jpg")
            try await request(f, client, id: 2, path: "/429.jpg")
            try await request(f, client, id: 3, path: "/503.jpg")
            let answers = try await client.answers(for: [1, 2, 3])
            expectError(try #require(answers[1]), code: 1006, kind: "not_found", "404")
            expectError(try #require(answers[2]), code: 1004, kind: "rate_limited", "429")
            #expect(answers[2]?.errorData["retryAfter"] as? Double == 120)
            expectError(try #require(answers[3]), code: 1003, kind: "upstream_error", "503")
            await client.close()
        }
    }

    @Test("a redirect to a forbidden place is 1010 forbidden")
    func forbiddenRedirect() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            f.images.serve("/away.jpg", body: SyntheticImages.jpeg(width: 300, height: 200),
                           faults: [.redirect(to: "http://169.254.169.254/latest/meta-data")])
            try await request(f, client, id: 1, path: "/away.jpg")
            expectError(try await client.answer(1).answer, code: 1010, kind: "forbidden", "redirect")
            // A URL outside the policy is refused without any request.
            try await client.send(rpcLine(2, "thumbnail.show", ["slot": 2, "url": "http://10.0.0.1/x.jpg"]))
            expectError(try await client.answer(2).answer, code: 1010, kind: "forbidden", "private address")
            await client.close()
        }
    }

    @Test("a stalled body is 1011 timeout")
    func timeout() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.stallTimeout = .seconds(1) }) { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(width: 800, height: 600)
            f.images.serve("/stall.jpg", body: body, faults: [.stall(afterBytes: 100)])
            try await request(f, client, id: 1, path: "/stall.jpg")
            let answer = try await client.answer(1, timeout: 120).answer
            #expect(answer.errorKind == "timeout", "\(answer)")
            #expect(answer.errorCode == 1011)
            await client.close()
        }
    }
}
