import Foundation

/// An HTTP date read from a header a host chose to send (`Retry-After`), in the three forms
/// HTTP asks a recipient to accept: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
/// obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`).
///
/// Written by hand rather than through `DateFormatter`: Foundation's formatter traps the whole
/// process ("Incorrect range CFRange") on some non-ASCII text where a day name is expected,
/// which a hostile host can send, and the grammar is a fixed run of ASCII fields that a
/// byte-by-byte reader checks completely (every field's range, the day against its month).
enum HTTPDate {
    /// The date `text` names, or nil when it is not exactly one of the three forms (surrounding
    /// blanks allowed). A weekday name must be a real one, but need not match the date, as
    /// HTTP allows; a leap second (`:60`) reads as the second before it. `now` places a
    /// two-digit year in its century.
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        var reader = Reader(Array(text.utf8))
        reader.skipBlanks()
        guard let seconds = reader.imfFixdate() ?? reader.rfc850(now: now) ?? reader.asctime() else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970 of a civil date and time in UTC, or nil when a field is out of range.
    /// The year is at most four digits, so the arithmetic stays far from `Int`'s bounds.
    static func epochSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        return daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar: years counted from March, so
    /// the leap day ends a year, then whole 400-year eras of 146 097 days.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// A cursor over the value's bytes; each form is tried from the same start.
    struct Reader {
        let bytes: [UInt8]
        var at = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipBlanks() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 { at += 1 }
        }

        /// `Sun, 06 Nov 1994 08:49:37 GMT`
        func imfFixdate() -> Int? {
            var r = self
            guard r.word(in: HTTPDate.shortDays) != nil, r.literal(", "), let day = r.digits(2), r.literal(" "),
                  let month = r.word(in: HTTPDate.months), r.literal(" "), let year = r.digits(4), r.literal(" "),
                  let time = r.time(), r.literal(" GMT"), r.atEnd() else { return nil }
            return HTTPDate.epochSeconds(year: year, month: month + 1, day: day, hour: time.0, minute: time.1, second: time.2)
        }

        /// `Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit year more than 50 years ahead of now is
        /// read as the century before, as HTTP says.
        func rfc850(now: Date) -> Int? {
            var r = self
            guard r.word(in: HTTPDate.longDays) != nil, r.literal(", "), let day = r.digits(2), r.literal("-"),
                  let month = r.word(in: HTTPDate.months), r.literal("-"), let twoDigits = r.digits(2), r.literal(" "),
                  let time = r.time(), r.literal(" GMT"), r.atEnd() else { return nil }
            let thisYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "GMT")!, from: now).year ?? 2000
            var year = thisYear / 100 * 100 + twoDigits
            if year > thisYear + 50 { year -= 100 }
            return HTTPDate.epochSeconds(year: year, month: month + 1, day: day, hour: time.0, minute: time.1, second: time.2)
        }

        /// `Sun Nov  6 08:49:37 1994` (a one-digit day is padded with a space).
        func asctime() -> Int? {
            var r = self
            guard r.word(in: HTTPDate.shortDays) != nil, r.literal(" "), let month = r.word(in: HTTPDate.months),
                  r.literal(" ") else { return nil }
            let day: Int
            if r.literal(" "), let one = r.digits(1) { day = one } else if let two = r.digits(2) { day = two } else { return nil }
            guard r.literal(" "), let time = r.time(), r.literal(" "), let year = r.digits(4), r.atEnd() else { return nil }
            return HTTPDate.epochSeconds(year: year, month: month + 1, day: day, hour: time.0, minute: time.1, second: time.2)
        }

        /// `HH:MM:SS`, each field exactly two digits.
        mutating func time() -> (Int, Int, Int)? {
            guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2) else { return nil }
            return (hour, minute, second)
        }

        /// The index in `words` of the one that starts here (case as written), consumed.
        mutating func word(in words: [String]) -> Int? {
            for (index, word) in words.enumerated() where literal(word) { return index }
            return nil
        }

        /// Exactly `count` ASCII digits, consumed.
        mutating func digits(_ count: Int) -> Int? {
            guard count <= bytes.count - at else { return nil }
            var value = 0
            for byte in bytes[at..<at + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            at += count
            return value
        }

        /// `text` exactly, consumed when it is there.
        mutating func literal(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard expected.count <= bytes.count - at, bytes[at..<at + expected.count].elementsEqual(expected) else { return false }
            at += expected.count
            return true
        }

        /// Only blanks are left.
        mutating func atEnd() -> Bool {
            skipBlanks()
            return at == bytes.count
        }
    }
}
