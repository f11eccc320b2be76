import Foundation
import ImageCacheProtocol
import Testing
@testable import ImageCacheKit

/// The inputs libFuzzer found that trapped the engine or broke a documented rule (scripts/fuzz,
/// Fuzz/README.md), kept byte for byte in `Inputs/` beside this file, each replayed through the
/// function that failed, plus its neighbours of the same kind.
@Suite("Fuzz regressions: the engine on the inputs that broke it", .timeLimit(.minutes(1)))
struct FuzzRegressionTests {
    /// The bytes of an input in `Inputs/`.
    static func input(_ name: String) throws -> [UInt8] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Inputs")
        return [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// A `providers` input: a selector byte (provider = byte % 3, call = byte / 3 % 3), then
    /// `STATUS\nName: value\n…\n\n` and the body, as the fuzz target reads it.
    static func answer(_ name: String) throws -> (provider: any PhotoProvider, call: Int, response: HTTPResponse) {
        let bytes = try input(name)
        let selector = Int(try #require(bytes.first))
        let rest = Array(bytes.dropFirst())
        let blank = try #require((0..<rest.count - 1).first { rest[$0] == 0x0A && rest[$0 + 1] == 0x0A })
        let head = String(decoding: rest[..<blank], as: UTF8.self).split(separator: "\n")
        let status = try #require(Int(head[0]))
        let headers = head.dropFirst().map { line -> (String, String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let id = ProviderID.allCases[selector % 3]
        let provider = makePhotoProvider(id, settings: ProviderSettings(apiKey: "k", apiURL: "https://api.fuzz.test"))
        return (provider, selector / 3 % 3, HTTPResponse(status: status, headers: headers, body: Array(rest[(blank + 2)...])))
    }

    static let query = SearchQuery(term: .query("fox"), page: 2, perPage: 20)

    @Test("a 429 with Retry-After: 1e300 is rate_limited with the clamped wait, and the limiter holds it")
    func retryAfterHuge() async throws {
        let (provider, call, response) = try Self.answer("providers-retry-after-1e300")
        #expect(call == 0)
        var caught: RPCError?
        do { _ = try provider.decodeSearch(response, for: Self.query) } catch { caught = wire(error) }
        let error = try #require(caught)
        #expect(error.data.kind == .rateLimited)
        #expect(error.data.retryAfter == OutsideSeconds.cap)
        let limiter = RateLimiter(provider: provider.id)
        await limiter.block(retryAfter: error.data.retryAfter)
        let left = try #require(await limiter.retryAfter())
        #expect(left > 0 && left <= OutsideSeconds.cap)
    }

    @Test("Retry-After and X-RateLimit-Reset values from outside are finite seconds or unreadable",
          arguments: ["inf", "1e16", "1e300", "-inf", "9223372036854775807", "Fri, 31 Dec 9999 23:59:59 GMT"])
    func headerSecondsClamped(_ value: String) throws {
        if value == "inf" { #expect(Array(value.utf8) == (try Self.input("header-values-inf"))) }
        if value.hasPrefix("-") {
            // A negative wait says nothing usable: it counts as absent (docs/protocol.md).
            #expect(RetryPolicy.parseRetryAfter(value) == nil)
        } else {
            let parsed = try #require(RetryPolicy.parseRetryAfter(value))
            #expect(parsed.isFinite && parsed >= 0 && parsed <= OutsideSeconds.cap)
        }
        if let provider = ProviderErrors.retryAfter(HTTPResponse(status: 429, headers: [("Retry-After", value)], body: [])) {
            #expect(provider.isFinite && provider >= 0 && provider <= OutsideSeconds.cap)
            #expect(wire(ProviderErrors.rateLimited(.unsplash, retryAfter: provider)).kind == .rateLimited)
        }
        let quota = ProviderQuota(headers: HTTPResponse(status: 429, headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", value)], body: []))
        if let reset = quota?.resetAfter { #expect(reset.isFinite && reset >= 0 && reset <= OutsideSeconds.cap) }
    }

    @Test("a Retry-After whose day name is followed by non-ASCII text is unreadable, and traps nothing")
    func retryAfterNonASCIIDayName() throws {
        // Foundation's DateFormatter trapped the process on this value ("Incorrect range").
        let value = String(decoding: try Self.input("header-values-day-name-non-ascii"), as: UTF8.self)
        #expect(RetryPolicy.parseRetryAfter(value) == nil)
        #expect(ProviderErrors.retryAfter(HTTPResponse(status: 429, headers: [("Retry-After", value)], body: [])) == nil)
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:49:35 GMT", now: Date(timeIntervalSince1970: 784_111_765)) == 10)
    }

    @Test("NaN is no number of seconds")
    func headerSecondsNaN() {
        #expect(RetryPolicy.parseRetryAfter("nan") == nil)
        #expect(ProviderErrors.retryAfter(HTTPResponse(status: 429, headers: [("Retry-After", "nan")], body: [])) == nil)
        #expect(ProviderQuota(headers: HTTPResponse(status: 200, headers: [("X-RateLimit-Reset", "nan")], body: [])) == nil)
        #expect(RetryPolicy.parseRetryAfter("120") == 120)
    }

    @Test("a search total of Int.max pages without overflowing")
    func totalIntMax() throws {
        let (provider, call, response) = try Self.answer("providers-total-int-max")
        #expect(call == 0)
        let page = try provider.decodeSearch(response, for: Self.query)
        #expect(page.total == Int.max)
        #expect(page.totalPages == Int.max / 20 + 1)
        #expect(Pagination.totalPages(total: 40, perPage: 20) == 2)
        #expect(Pagination.totalPages(total: 41, perPage: 20) == 3)
    }

    @Test("an Unsplash photo of height Int.max and width 1 decodes, its scaled heights unknown")
    func unsplashHeightIntMax() throws {
        let (provider, call, response) = try Self.answer("providers-unsplash-height-int-max")
        #expect(provider.id == .unsplash && call == 1)
        let photo = try provider.decodePhoto(response, id: "a")
        #expect(photo.photo.height == Int.max)
        #expect(photo.variants.contains { $0.name == "small" && $0.width == 1 && $0.height == nil })
        // The engine's next step with such a photo, and with a width of 0 (NaN before).
        #expect(photo.variant(forWidth: 400).height == nil)
        var flat = photo
        flat.photo.width = 0
        flat.photo.height = 10
        #expect(flat.variant(forWidth: 400).height == nil)
    }

    @Test("Content-Range with a negative total is no length")
    func contentRangeNegative() throws {
        let value = String(decoding: try Self.input("header-values-content-range-negative"), as: UTF8.self)
        #expect(value == "bytes 0-0/-5")
        #expect(ContentRange.total(of: value) == nil)
        #expect(ContentRange.parse(value) == nil)
        #expect(ContentRange.total(of: "bytes 0-0/12345") == 12345)
    }

    @Test("Content-Range of unknown total whose length is past Int.max is no range")
    func contentRangeLengthPastIntMax() throws {
        let value = String(decoding: try Self.input("header-values-content-range-length-past-int-max"), as: UTF8.self)
        #expect(value == "bytes 0-9223372036854775807/*")
        #expect(ContentRange.parse(value) == nil)
        // One byte shorter fits: its length is Int.max.
        #expect(ContentRange.parse("bytes 1-9223372036854775807/*")?.length == Int.max)
        #expect(ContentRange.parse("bytes 0-9223372036854775806/*")?.length == Int.max)
        // With a known total the last position is below it, so the length always fits.
        #expect(ContentRange.parse("bytes 0-9223372036854775806/9223372036854775807")?.length == Int.max)
    }

    @Test("a dot followed by a combining mark does not make a hidden file")
    func leadingDotWithCombiningMark() throws {
        let name = String(decoding: try Self.input("filename-dot-combining-mark"), as: UTF8.self)
        #expect(name == ".\u{301}name")
        let clean = try #require(DownloadDestination.sanitise(name))
        #expect(clean.utf8.first != UInt8(ascii: "."))
        // The dot goes with its mark: a lone mark left at the start would join whatever is
        // written before the name (a "/" in a path) into one character.
        #expect(clean == "name")
        #expect(DownloadDestination.sanitise("..\u{301}") == nil)
        // The trim runs again after the cut to the byte limit, so it never leaves a trailing space.
        let limit = DownloadDestination.maxNameBytes
        let cut = try #require(DownloadDestination.sanitise(String(repeating: "a", count: limit - 1) + " bc"))
        #expect(cut == String(repeating: "a", count: limit - 1))
    }

    @Test("a space followed by a combining mark does not leave a name ending in a space")
    func trailingSpaceWithCombiningMark() throws {
        let name = String(decoding: try Self.input("filename-space-combining-mark"), as: UTF8.self)
        #expect(name.unicodeScalars.suffix(2).map(\.value) == [0x20, 0x301])
        let clean = try #require(DownloadDestination.sanitise(name))
        #expect(clean.last?.isWhitespace == false)
        #expect(clean.unicodeScalars.last == "\u{FFFD}")
        #expect(DownloadDestination.sanitise("name \u{301}") == "name")
        #expect(DownloadDestination.sanitise("name.\u{301}") == "name")
        #expect(DownloadDestination.sanitise(" \u{301}name") == "name")
        #expect(DownloadDestination.sanitise("cafe\u{301}") == "caf\u{E9}")
        #expect(try DownloadDestination.checkedName("photo \u{301}.jpg") == "photo \u{301}.jpg".precomposedStringWithCanonicalMapping)
    }

    @Test("a URL whose path traps Foundation's path-extension parsing gives a default name and extension, no trap")
    func urlPathExtensionTrap() throws {
        // Not UTF-8: decoded as the fuzz target decodes it, with replacement characters.
        let url = String(decoding: try Self.input("filename-url-path-extension-trap"), as: UTF8.self)
        #expect(DownloadDestination.guessedExtension(url: url) == "jpg")
        let stem = DownloadDestination.defaultStem(photo: nil, url: url)
        #expect(!stem.isEmpty && !stem.contains("/"))
        // The same rules on ordinary URLs: the path's own extension when the daemon reads it.
        #expect(DownloadDestination.guessedExtension(url: "https://e.test/a/photo.PNG?x=1") == "png")
        #expect(DownloadDestination.guessedExtension(url: "https://e.test/a/photo.webp") == "webp")
        #expect(DownloadDestination.guessedExtension(url: "https://e.test/a/.png") == "jpg")
        #expect(DownloadDestination.guessedExtension(url: "https://e.test/a.png/photo") == "jpg")
        #expect(DownloadDestination.defaultStem(photo: nil, url: "https://e.test/a/photo.jpeg") == "photo")
        #expect(DownloadDestination.defaultStem(photo: nil, url: "https://e.test/a/archive.tar.gz") == "archive.tar")
        #expect(DownloadDestination.defaultStem(photo: nil, url: "https://e.test/") == "image")
    }

    @Test("an ftyp box over 4 KiB is refused whole as in part, whatever brands it lists further in")
    func largeBrandBox() throws {
        let bytes = try Self.input("image-header-ftyp-over-4k")
        #expect(bytes.count == 19_697)
        #expect(Array(bytes[0..<8]) == [0x00, 0x00, 0x3F, 0x00] + Array("ftyp".utf8))
        // "avis" sits 3 799 bytes in, inside the 16 128-byte box: a prefix of the box cannot
        // show it, so the whole body must not be taken for it either.
        #expect(ImageFormat.sniff(bytes) == nil)
        for cut in [12, 16, 4_924, 16_128, bytes.count] {
            #expect(throws: ImagingError.self, "\(cut) bytes") { _ = try ImageHeaderProbe.probe(Array(bytes.prefix(cut))) }
        }
        // A box of real size listing AVIF as a compatible brand is AVIF; so is a large one whose
        // major brand says so, from its first 12 bytes.
        let small: [UInt8] = [0, 0, 0, 24] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8)
        #expect(ImageFormat.sniff(small) == .avif)
        let major: [UInt8] = [0, 0, 0x3F, 0] + Array("ftypavif".utf8)
        #expect(ImageFormat.sniff(major) == .avif)
    }

    @Test("an AVIF whose ispe sizes multiply past Int.max is too_large, not a trap")
    func avifPixelCountOverflow() throws {
        let bytes = try Self.input("avif-ispe-product-overflows")
        #expect(throws: ImagingError.self) { try Thumbnailer.validate(bytes) }
        do {
            _ = try Thumbnailer.validate(bytes)
        } catch {
            guard case .tooLarge(let width, let height, _) = error else {
                Issue.record("expected too_large, got \(error)")
                return
            }
            #expect(width.multipliedReportingOverflow(by: height).overflow, "\(width) × \(height)")
        }
        let huge = ImageHeader(format: .avif, storedWidth: 0xFFFF_FFFF, storedHeight: 0xFFFF_FFFF)
        #expect(huge.pixelCount == Int.max)
        #expect(throws: ImagingError.self) { try huge.checkPixelLimit(Thumbnailer.defaultMaxPixels) }
    }
}
