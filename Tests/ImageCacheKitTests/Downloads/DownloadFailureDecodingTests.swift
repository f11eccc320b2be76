import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing

/// A failure read back from the job table goes through the rules of one made by the daemon:
/// the table is a file, and a value edited into it is not trusted.
@Suite("Downloads: a recorded failure read from the table", .timeLimit(.minutes(1)))
struct DownloadFailureDecodingTests {
    private func decoded(_ json: String) throws -> DownloadFailure {
        try JSONDecoder().decode(DownloadFailure.self, from: Data(json.utf8))
    }

    @Test("retryAfter out of range is clamped to [0, the cap] and rounded up to whole seconds", arguments: [
        ("1e300", OutsideSeconds.cap), ("-5", 0), ("2.25", 3), ("86400", OutsideSeconds.cap),
    ])
    func retryAfter(written: String, read: Double) throws {
        let failure = try decoded(#"{"code":1004,"message":"slow down","data":{"kind":"rate_limited","retryAfter":\#(written)}}"#)
        #expect(failure.retryAfter == read)
    }

    @Test("a secret in a stored message or body is redacted on reading")
    func texts() throws {
        let failure = try decoded(#"""
            {"code":1003,"message":"GET https://h.test/a.jpg?token=s3cr3t-value failed","data":{"kind":"upstream_error","status":500,"body":"see https://h.test/b?sig=another-s3cr3t"}}
            """#)
        #expect(!failure.message.contains("s3cr3t-value"))
        #expect(!(failure.body ?? "").contains("another-s3cr3t"))
        #expect(failure.status == 500 && failure.kind == .upstreamError)
    }

    @Test("a failure made here reads back equal")
    func roundTrip() throws {
        let made = DownloadFailure(.rateLimited, "slow down", status: 429, retryAfter: 1.5, reason: nil)
        #expect(try JSONDecoder().decode(DownloadFailure.self, from: try JSONEncoder().encode(made)) == made)
    }
}
