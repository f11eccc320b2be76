/// One decoded page of results from a provider, with the paging numbers the contract asks for.
///
/// `total` counts only the results reachable by paging (Flickr stops at 4 000, Pixabay at
/// `totalHits`), so `totalPages` never promises a page the provider would refuse.
public struct ProviderSearchPage: Sendable, Hashable, Codable {
    public var photos: [ProviderPhoto]
    public var page: Int
    public var perPage: Int
    public var total: Int
    package var totalPages: Int
    package var hasMore: Bool
    /// Items of the answer that were not photos or lacked a required field (a video, a
    /// truncated record): left out rather than failing the whole page.
    package var skipped: Int
    /// What the decoder left out (items and fields), for the one log line of this answer; not
    /// stored with the page.
    package var notes = DecodeNotes()
    /// An empty page past the end whose answer carried no totals (Pixabay's 400): the caller
    /// learns them from page 1 before answering. Never stored.
    package var needsTotals = false

    enum CodingKeys: String, CodingKey {
        case photos, page, perPage, total, totalPages, hasMore, skipped
    }

    public init(photos: [ProviderPhoto], page: Int, perPage: Int, total: Int, skipped: Int = 0) {
        self.photos = photos
        self.page = page
        self.perPage = perPage
        self.total = max(0, total)
        self.totalPages = Pagination.totalPages(total: self.total, perPage: perPage)
        self.hasMore = Pagination.hasMore(page: page, totalPages: totalPages)
        self.skipped = skipped
    }
}

/// The paging arithmetic, in one place so the coordinator's "page beyond the end" check and
/// the decoders agree.
package enum Pagination {
    /// `ceil(total / perPage)`; zero results make zero pages.
    package static func totalPages(total: Int, perPage: Int) -> Int {
        guard total > 0, perPage > 0 else { return 0 }
        return total / perPage + (total % perPage == 0 ? 0 : 1)  // no overflow for any total
    }

    /// Whether a page after this one exists.
    package static func hasMore(page: Int, totalPages: Int) -> Bool { page < totalPages }

    /// The total a provider lets a client page through: the reported total, capped.
    package static func reachable(total: Int, cap: Int?) -> Int {
        guard let cap else { return max(0, total) }
        return max(0, min(total, cap))
    }

    /// Whether a page lies wholly beyond what a provider's cap lets anyone reach, so it can be
    /// answered empty before knowing the total (Flickr page 41 of 100 per page).
    package static func isBeyondCap(page: Int, perPage: Int, cap: Int?) -> Bool {
        guard let cap else { return false }
        let (skipped, overflow) = max(0, page - 1).multipliedReportingOverflow(by: max(0, perPage))
        return overflow || skipped >= cap
    }
}
