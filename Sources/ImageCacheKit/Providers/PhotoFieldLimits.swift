import ImageCacheProtocol

/// What one photo's free-text fields may carry, and the notes of what a decoder left out.
///
/// A provider's answer is outside input: a record with 10 000 tags or a 1 MB description
/// would be remembered, persisted and sent to every client that searches. Past these bounds
/// the field is left out (never cut to something the provider did not say), and the decoder
/// notes it so the page's one log line tells an operator what was dropped.
enum PhotoFieldLimits {
    /// Tags kept per photo at most; a longer list is left out whole.
    static let maxTags = 200
    /// A tag longer than this (in UTF-8 bytes) is not a keyword: the list is left out.
    static let maxTagBytes = 200
    /// A description longer than this (UTF-8 bytes) is left out.
    static let maxDescriptionBytes = 16_384

    /// Applies the bounds to `photo`, noting each field left out.
    static func bound(_ photo: inout Photo, notes: inout DecodeNotes) {
        if let tags = photo.tags {
            if tags.count > maxTags || tags.contains(where: { $0.utf8.count > maxTagBytes }) {
                notes.add("\(photo.id): tags left out (\(tags.count) entries)")
                photo.tags = nil
            } else if tags.isEmpty {
                photo.tags = nil
            }
        }
        if let description = photo.description, description.utf8.count > maxDescriptionBytes {
            notes.add("\(photo.id): description left out (\(description.utf8.count) bytes)")
            photo.description = nil
        }
    }
}

/// What decoding an answer left out (items dropped, fields over their bounds), for one log
/// line per answer: a count and the first few reasons.
package struct DecodeNotes: Sendable, Hashable {
    /// Reasons kept for the log line at most.
    package static let kept = 8
    /// How many things were left out.
    package private(set) var count = 0
    /// The first `kept` reasons.
    package private(set) var reasons: [String] = []

    package init() {}

    package mutating func add(_ reason: String) {
        count += 1
        if reasons.count < Self.kept { reasons.append(String(reason.prefix(200))) }
    }
}
