import Foundation

/// A search page with the search it answers, as JSON: what the disk tier and the fleet's shared
/// tier both store, so a page is written, read back and checked against the search asked for
/// one way in both (a page stored under a colliding key, or planted, is never another search's).
struct SearchPageRecord: Codable {
    var key: SearchPageKey
    var page: StoredSearchPage

    /// The JSON of `page` answering `key`; nil if it cannot be encoded.
    static func encode(_ page: StoredSearchPage, for key: SearchPageKey) -> Data? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return try? encoder.encode(SearchPageRecord(key: key, page: page))
    }

    /// The page in `bytes` when they hold one answering exactly `key`; nil for anything else.
    static func decode(_ bytes: Data, for key: SearchPageKey) -> StoredSearchPage? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let record = try? decoder.decode(SearchPageRecord.self, from: bytes), record.key == key else { return nil }
        return record.page
    }
}
