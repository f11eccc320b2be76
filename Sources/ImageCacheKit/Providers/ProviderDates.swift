import Foundation

/// The providers' time stamps as the protocol's `takenAt`/`uploadedAt`: ISO 8601 in UTC with
/// `Z` (docs/protocol.md, "Objects"), so a client compares and sorts them without knowing
/// where they came from. Anything unreadable is nil: a time is left out, never guessed.
enum ProviderDates {
    /// Seconds since 1970, as Flickr's `dateupload` and `dates.posted` send them (a string or a
    /// number); nil outside 1970…9999.
    static func unix(_ value: LenientJSON) -> String? {
        guard let seconds = value.int, seconds > 0, seconds < 253_402_300_800 else { return nil }
        return format(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// An ISO 8601 time with its offset (Unsplash's `created_at`, `2021-02-02T03:10:25-05:00`),
    /// converted to UTC.
    static func iso8601(_ value: LenientJSON) -> String? {
        guard let text = value.text, text.utf8.count <= 64 else { return nil }
        let parser = ISO8601DateFormatter()
        if let date = parser.date(from: text) { return format(date) }
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return parser.date(from: text).map(format)
    }

    /// Flickr's `datetaken` (`2015-12-16 10:20:30`): the camera's clock, which carries no time
    /// zone, written out as it is with `Z`. Nil when Flickr says it does not know the date
    /// (`datetakenunknown` 1), which it then fills with the upload time.
    static func flickrTaken(_ value: LenientJSON, unknown: LenientJSON) -> String? {
        guard unknown.int != 1, let text = value.text, text.utf8.count <= 32 else { return nil }
        let parser = DateFormatter()
        parser.locale = Locale(identifier: "en_US_POSIX")
        parser.timeZone = TimeZone(identifier: "UTC")
        parser.dateFormat = "yyyy-MM-dd HH:mm:ss"
        guard let date = parser.date(from: text), date.timeIntervalSince1970 > 0 else { return nil }
        return format(date)
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
