import ImageCacheProtocol
import Testing
@testable import ImageCacheCLI

@Suite("Search table", .timeLimit(.minutes(1)))
struct SearchTableTests {
    let photos = [
        Fixtures.photo("unsplash:Dwu85P9SOIk"),
        Fixtures.photo("unsplash:abc", width: nil, height: nil, author: "山田 太郎", likes: nil,
                       description: "富士山と湖 🌅 a very long description that goes on and on about the lake and the mountain"),
        Fixtures.photo("unsplash:x1", author: "Zoë", likes: 1_234_567, description: nil),
    ]

    @Test(arguments: [60, 80, 100, 132])
    func noLineIsWiderThanTheTerminal(width: Int) {
        let text = SearchTable.render(Fixtures.page(photos), width: width)
        for line in text.split(separator: "\n").dropFirst() {
            #expect(DisplayWidth.of(line) <= width, "\(line)")
        }
    }

    @Test func everyPhotoHasARowWithIdSizeAuthorAndLikes() {
        let text = SearchTable.render(Fixtures.page(photos), width: 120)
        #expect(text.contains("unsplash:Dwu85P9SOIk"))
        #expect(text.contains("4000×3000"))
        #expect(text.contains("山田 太郎"))
        #expect(text.contains("1234567"))
    }

    @Test func longDescriptionsAreCutWithAnEllipsis() {
        let text = SearchTable.render(Fixtures.page(photos), width: 90)
        #expect(text.contains("…"))
        #expect(!text.contains("about the lake and the mountain"))
    }

    @Test func footerSaysWhichPageOfHowMany() {
        let text = SearchTable.render(Fixtures.page(photos, page: 2, totalPages: 17), width: 100)
        #expect(text.contains("page 2 of 17"))
        #expect(text.contains("--page 3"))
    }

    @Test func headingFlagsCachedAndStalePages() {
        #expect(SearchTable.heading(Fixtures.page(photos, fromCache: true)).contains("from cache"))
        #expect(SearchTable.heading(Fixtures.page(photos, stale: true)).contains("STALE"))
        #expect(!SearchTable.heading(Fixtures.page(photos)).contains("STALE"))
    }

    @Test func aPageBeyondTheLastSaysSo() {
        let text = SearchTable.render(Fixtures.page([], page: 20, totalPages: 17), width: 100)
        #expect(text.contains("the last page is 17"))
    }

    @Test func aSearchWithoutResultsSaysSo() {
        let empty = SearchResult(query: "zzqx", provider: "pixabay", page: 1, perPage: 20, total: 0, totalPages: 0,
                                 hasMore: false, photos: [], fromCache: false, stale: false)
        let text = SearchTable.render(empty, width: 100)
        #expect(text.contains("0 results"))
        #expect(text.hasSuffix("no results"))
    }

    @Test func aVeryNarrowTerminalDropsTheDescriptionColumn() {
        let rows = SearchTable.rows(photos, width: 40)
        #expect(!rows[0].contains("DESCRIPTION"))
    }
}
