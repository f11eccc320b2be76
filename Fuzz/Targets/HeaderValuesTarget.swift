import Foundation
import ImageCacheProtocol
@testable import ImageCacheKit

/// `header-values`: every parser of an HTTP header value the daemon reads from hosts it does
/// not control, with the input as the value (bytes decoded as the transfer engine decodes
/// them): the shared number reader (`OutsideSeconds.parse`), `Retry-After`
/// (`RetryPolicy.parseRetryAfter`, which image hosts and providers share), the rate-limit
/// headers (`ProviderQuota.parseCount`/`parseReset`), and `Content-Range`
/// (`ContentRange.parse`, `ContentRange.total(of:)`). Each result then goes where the daemon
/// sends it: the errors that carry it and the rate limiter's block.
///
/// Properties: never a trap; seconds are finite and never negative; a length is never negative.
enum HeaderValuesTarget {
    static let target = FuzzTarget(name: "header-values", summary: "Retry-After, X-RateLimit-*, Content-Range parsers and their consumers", run: run)

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let value = FuzzCheck.text(bytes)

        let seconds = OutsideSeconds.parse(value[...])
        checkSeconds(seconds, "OutsideSeconds.parse")
        FuzzCheck.require(seconds.map { $0 <= OutsideSeconds.cap } ?? true, "OutsideSeconds.parse read \(seconds!) s, over the cap")
        _ = ProviderQuota.parseCount(value)
        checkSeconds(ProviderQuota.parseReset(value), "ProviderQuota.parseReset")

        let imageHost = RetryPolicy.parseRetryAfter(value)
        checkSeconds(imageHost, "RetryPolicy.parseRetryAfter")
        for status in [429, 503] {
            _ = TransferFailure.error(forStatus: status, url: "https://images.fuzz.test/a.jpg", excerpt: [], retryAfter: imageHost)
        }

        let provider = ProviderErrors.retryAfter(HTTPResponse(status: 429, headers: [("Retry-After", value)], body: []))
        checkSeconds(provider, "ProviderErrors.retryAfter")
        _ = ProviderErrors.rateLimited(.unsplash, retryAfter: provider, status: 429)

        let quota = ProviderQuota(headers: HTTPResponse(status: 200, headers: [
            ("X-RateLimit-Limit", value), ("X-RateLimit-Remaining", value), ("X-RateLimit-Reset", value),
        ], body: []))
        checkSeconds(quota?.resetAfter, "ProviderQuota.resetAfter")
        let limiter = RateLimiter(provider: .pixabay)
        FuzzCheck.blocking {
            await limiter.block(retryAfter: provider)
            await limiter.block(retryAfter: quota?.resetAfter)
            if let left = await limiter.retryAfter() {
                _ = ProviderErrors.rateLimited(.pixabay, retryAfter: left)
            }
        }

        let length = ContentRange.total(of: value)
        FuzzCheck.require(length.map { $0 >= 0 } ?? true, "Content-Range \(value.debugDescription): a length of \(length!)")
        if let range = ContentRange.parse(value) {
            FuzzCheck.require(range.first >= 0 && range.first <= range.last && range.length > 0
                              && range.total.map { range.last < $0 } ?? true, "Content-Range \(value.debugDescription): \(range)")
            _ = range.fits(offset: range.first, knownTotal: range.total, contentLength: range.length)
        }
    }

    static func checkSeconds(_ seconds: Double?, _ parser: String) {
        guard let seconds else { return }
        FuzzCheck.require(seconds.isFinite && seconds >= 0, "\(parser) read \(seconds) s")
    }
}
