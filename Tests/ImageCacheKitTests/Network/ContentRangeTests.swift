@testable import ImageCacheKit
import Testing

@Suite("Network: Content-Range read strictly", .timeLimit(.minutes(1)))
struct ContentRangeTests {
    @Test("well-formed values parse; anything else is nil, never a trap", arguments: [
        ("bytes 0-99/100", ContentRange(first: 0, last: 99, total: 100)),
        ("bytes 6566-13131/13132", ContentRange(first: 6566, last: 13131, total: 13132)),
        ("BYTES 5-9/*", ContentRange(first: 5, last: 9, total: nil)),
        (" bytes 5-9/10 ", ContentRange(first: 5, last: 9, total: 10)),
        ("bytes */13132", nil), ("bytes 9-5/10", nil), ("bytes 5-10/10", nil), ("bytes -5-9/10", nil),
        ("bytes 5-9/-10", nil), ("bytes +5-9/10", nil), ("items 5-9/10", nil), ("bytes 5-9", nil), ("", nil),
        ("bytes 0-99999999999999999999999/100", nil), ("bytes 0-9/99999999999999999999999", nil),
        ("bytes 9223372036854775806-9223372036854775806/9223372036854775807",
         ContentRange(first: Int.max - 1, last: Int.max - 1, total: Int.max)),
    ] as [(String, ContentRange?)])
    func parse(value: String, expected: ContentRange?) {
        #expect(ContentRange.parse(value) == expected)
    }

    @Test("a range fits a .part only when it starts at its end, runs to a total that agrees, and matches Content-Length")
    func fits() throws {
        let range = try #require(ContentRange.parse("bytes 6566-13131/13132"))
        #expect(range.fits(offset: 6566, knownTotal: 13132, contentLength: 6566))
        #expect(range.fits(offset: 6566, knownTotal: nil, contentLength: nil))
        #expect(!range.fits(offset: 8566, knownTotal: 13132, contentLength: 6566))  // starts inside the .part
        #expect(!range.fits(offset: 6566, knownTotal: 20000, contentLength: nil))   // another total
        #expect(!range.fits(offset: 6566, knownTotal: nil, contentLength: 100))      // a body of another length
        #expect(!(try #require(ContentRange.parse("bytes 6566-7000/13132"))).fits(offset: 6566, knownTotal: nil, contentLength: nil))
        #expect(!(try #require(ContentRange.parse("bytes 6566-13131/*"))).fits(offset: 6566, knownTotal: nil, contentLength: nil))
    }
}
