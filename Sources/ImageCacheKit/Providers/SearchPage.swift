/// One decoded page of results from a provider, with the paging numbers the contract asks for.
///
/// `total` counts only the results reachable by paging (Flickr stops at 4 000, Pixabay at
/// `totalHits`), so `totalPages` never promises a page the provider would refuse.
public struct ProviderSearchPage: Sendable, Hashable, Codable {
    public var photos: [ProviderPhoto]
    public var page: Int
    public var perPage: Int
    public var total: Int
    public var totalPages: Int
    public var hasMore: Bool
    /// Items of the answer that were not photos or lacked a required field (a video, a
    /// truncated record): left out rather than failing the whole page.
    public var skipped: Int

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
public enum Pagination {
    /// `ceil(total / perPage)`; zero results make zero pages.
    public static func totalPages(total: Int, perPage: Int) -> Int {
        guard total > 0, perPage > 0 else { return 0 }
        // Not `(total + perPage - 1) / perPage`: a provider's total of Int.max would overflow.
        return total / perPage + (total % perPage == 0 ? 0 : 1)
    }

    /// Whether a page after this one exists.
    public static func hasMore(page: Int, totalPages: Int) -> Bool { page < totalPages }

    /// The total a provider lets a client page through: the reported total, capped.
    public static func reachable(total: Int, cap: Int?) -> Int {
        guard let cap else { return max(0, total) }
        return max(0, min(total, cap))
    }

    /// Whether a page lies wholly beyond what a provider's cap lets anyone reach, so it can be
    /// answered empty before knowing the total (Flickr page 41 of 100 per page).
    public static func isBeyondCap(page: Int, perPage: Int, cap: Int?) -> Bool {
        guard let cap else { return false }
        return (page - 1) * perPage >= cap
    }
}
