import Foundation
import Testing
import ImageCacheProtocol
@testable import ImageCacheKit

/// HTTP dates as hosts send them in `Retry-After`: the three forms HTTP names, read to the
/// second, and everything else (a field out of range, a stray byte, non-ASCII text) unreadable
/// rather than a guess or a trap.
@Suite("HTTP dates: the three forms, exactly", .timeLimit(.minutes(1)))
struct HTTPDateTests {
    /// 1994-11-06 08:49:37 UTC, HTTP's own example.
    static let example: TimeInterval = 784_111_777

    @Test("IMF-fixdate, RFC 850 and asctime name the same instant",
          arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                      "  Sun, 06 Nov 1994 08:49:37 GMT\t"])
    func threeForms(_ text: String) throws {
        let date = try #require(HTTPDate.parse(text, now: Date(timeIntervalSince1970: 1_795_000_000)))
        #expect(date.timeIntervalSince1970 == Self.example)
    }

    @Test("the calendar: epoch, leap days, century rules, the last second of 9999")
    func calendar() {
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT")?.timeIntervalSince1970 == 0)
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT")?.timeIntervalSince1970 == 951_825_600)
        #expect(HTTPDate.parse("Sun, 29 Feb 2026 12:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Mon, 29 Feb 2100 12:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 01 Mar 2026 00:00:00 GMT")?.timeIntervalSince1970 == 1_772_323_200)
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT")?.timeIntervalSince1970 == 253_402_300_799)
        #expect(HTTPDate.parse("Sat, 01 Jan 0000 00:00:00 GMT")?.timeIntervalSince1970 == -62_167_219_200)
        // A leap second reads as the second before it.
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT")?.timeIntervalSince1970 == 1_483_228_799)
    }

    @Test("a two-digit year is in this century unless that is more than 50 years ahead")
    func twoDigitYears() {
        let now = Date(timeIntervalSince1970: 1_795_000_000) // 2026
        #expect(HTTPDate.parse("Monday, 30-Nov-26 00:00:00 GMT", now: now)?.timeIntervalSince1970 == 1_795_996_800)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now)?.timeIntervalSince1970 == Self.example)
        #expect(HTTPDate.parse("Thursday, 01-Jan-76 00:00:00 GMT", now: now)?.timeIntervalSince1970 == 3_345_062_400)
        #expect(HTTPDate.parse("Thursday, 01-Jan-77 00:00:00 GMT", now: now)?.timeIntervalSince1970 == 220_924_800)
    }

    @Test("anything not exactly one of the forms is unreadable", arguments: [
        "", "GMT", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 GIT",
        "sun, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT", "Sun, 06 Nov 1994 08:49:37 GMT x", "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov +994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\0", "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94", "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun\u{06EA}06 Nov 1994 08:49:35 GMT", "Sün, 06 Nov 1994 08:49:37 GMT",
        "Sun, ０6 Nov 1994 08:49:37 GMT",
    ])
    func unreadable(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("a weekday that does not match its date is still read, as HTTP allows")
    func weekdayNotChecked() {
        #expect(HTTPDate.parse("Mon, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == Self.example)
    }

    @Test("Retry-After as a date is the wait until then, clamped; a past date is no wait")
    func retryAfterDate() {
        let now = Date(timeIntervalSince1970: Self.example - 90)
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 90)
        #expect(RetryPolicy.parseRetryAfter("Sun Nov  6 08:49:37 1994", now: now) == 90)
        #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: Date(timeIntervalSince1970: Self.example + 5)) == 0)
        #expect(RetryPolicy.parseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == OutsideSeconds.cap)
    }
}
