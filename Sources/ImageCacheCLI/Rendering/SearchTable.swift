import ImageCacheProtocol

/// The `search` command's output: a heading, one row per photo, and where the page sits.
///
/// Pure so tests can check the widths: no row is wider than `width` columns (as a terminal
/// counts them) unless even the fixed columns do not fit, and the description is what gives
/// way, cut with an ellipsis.
public enum SearchTable {
    /// Columns between table columns.
    static let gap = "  "
    /// The narrowest description column worth showing; below this it is left out.
    static let minimumDescription = 8

    /// The whole output for one page, lines joined with `\n` (no final newline).
    public static func render(_ result: SearchResult, width: Int) -> String {
        var lines = [heading(result)]
        if result.photos.isEmpty {
            lines.append(result.page > result.totalPages && result.totalPages > 0
                         ? "No photos on page \(result.page): the last page is \(result.totalPages)."
                         : "No photos.")
        } else {
            lines.append(contentsOf: rows(result.photos, width: width))
        }
        lines.append(footer(result))
        return lines.joined(separator: "\n")
    }

    /// `-q`'s output: one row per photo and nothing else (no heading, no column names, no
    /// "page N of M"), so a script reads results only; empty when the page has none.
    public static func resultRows(_ result: SearchResult, width: Int) -> [String] {
        guard !result.photos.isEmpty else { return [] }
        return Array(rows(result.photos, width: width).dropFirst())
    }

    /// `unsplash · "beach" · 340 results` plus the cache flags.
    public static func heading(_ result: SearchResult) -> String {
        var what = result.query.map { "\"\($0)\"" } ?? "recent photos"
        if result.query == nil, let feed = result.feed { what = "feed \(feed.rawValue)" }
        var parts = [result.provider, what, Units.count(result.total, "result")]
        if result.fromCache { parts.append("from cache") }
        if result.stale { parts.append("STALE: the network failed, this is a cached copy") }
        return parts.joined(separator: " · ")
    }

    /// `page 2 of 17`, with how to get the next one. A page past the last (`--page 389` of
    /// 388) says so and names the last page, never "page 389 of 388".
    public static func footer(_ result: SearchResult) -> String {
        if result.total == 0 { return "no results" }
        if result.page > result.totalPages {
            return "past the last page: there \(result.totalPages == 1 ? "is" : "are") \(Units.count(result.totalPages, "page")) (last: --page \(result.totalPages))"
        }
        var text = "page \(result.page) of \(result.totalPages)"
        if result.hasMore { text += " (next: --page \(result.page + 1))" }
        return text
    }

    /// The header row and one row per photo, fitted to `width`.
    public static func rows(_ photos: [Photo], width: Int) -> [String] {
        let ids = photos.map(\.id)
        let sizes = photos.map(size)
        let authors = photos.map(\.author.name)
        let likes = photos.map { $0.likes.map(String.init) ?? "-" }
        let idWidth = min(32, max(2, ids.map { DisplayWidth.of($0) }.max() ?? 0))
        let sizeWidth = max(4, sizes.map { DisplayWidth.of($0) }.max() ?? 0)
        let authorWidth = min(20, max(6, authors.map { DisplayWidth.of($0) }.max() ?? 0))
        let likesWidth = max(5, likes.map { DisplayWidth.of($0) }.max() ?? 0)
        let fixed = idWidth + sizeWidth + authorWidth + likesWidth + gap.count * 3
        let descriptionWidth = width - fixed - gap.count
        let showDescription = descriptionWidth >= minimumDescription

        func row(_ id: String, _ size: String, _ author: String, _ likes: String, _ description: String) -> String {
            var cells = [DisplayWidth.pad(id, to: idWidth), DisplayWidth.pad(size, to: sizeWidth, alignRight: true),
                         DisplayWidth.pad(author, to: authorWidth), DisplayWidth.pad(likes, to: likesWidth, alignRight: true)]
            if showDescription { cells.append(DisplayWidth.truncate(description, to: descriptionWidth)) }
            return trimTrailing(cells.joined(separator: gap))
        }

        var lines = [row("ID", "SIZE", "AUTHOR", "LIKES", "DESCRIPTION")]
        for (index, photo) in photos.enumerated() {
            lines.append(row(ids[index], sizes[index], authors[index], likes[index], photo.description ?? ""))
        }
        return lines
    }

    /// `4000×3000`, or `?` when the provider did not say.
    static func size(_ photo: Photo) -> String {
        guard let w = photo.width, let h = photo.height else { return "?" }
        return "\(w)×\(h)"
    }

    static func trimTrailing(_ text: String) -> String {
        var text = text
        while text.last == " " { text.removeLast() }
        return text
    }
}
