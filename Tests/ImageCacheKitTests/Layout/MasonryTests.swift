@testable import ImageCacheKit
import Testing

/// The shortest-column masonry of `layout` (docs/protocol.md): placement, ties, spacing, unknown sizes,
/// paging, and the exactness of the (unrounded) coordinates.
@Suite("Masonry: shortest-column placement", .timeLimit(.minutes(1)))
struct MasonryTests {
    private static func size(_ w: Double, _ h: Double) -> Masonry.Size { Masonry.Size(width: w, height: h) }

    @Test("each item goes to the column with the least height")
    func shortestColumnWins() {
        var masonry = Masonry(columns: 3, width: 300)
        // Heights at width 100: 200, 50, 100, then the next goes under the 50.
        let frames = masonry.place([Self.size(1, 2), Self.size(2, 1), Self.size(1, 1), Self.size(1, 1)])
        #expect(frames.map(\.column) == [0, 1, 2, 1])
        #expect(frames[3].y == 50)
        #expect(masonry.columnHeights == [200, 150, 100])
    }

    @Test("on equal heights the leftmost column is chosen")
    func tiesGoLeft() {
        var masonry = Masonry(columns: 4, width: 400)
        let frames = masonry.place(Array(repeating: Self.size(1, 1), count: 6))
        #expect(frames.map(\.column) == [0, 1, 2, 3, 0, 1])
        var uneven = Masonry(columns: 3, width: 300, columnHeights: [80, 40, 40])
        #expect(uneven.place(Self.size(1, 1)).column == 1)
    }

    @Test("heights equal up to floating-point rounding are a tie (leftmost), not a win for the smaller sum")
    func roundingIsATie() {
        // 0.1 + 0.2 is 0.30000000000000004 in doubles, above 0.3: still a tie.
        var masonry = Masonry(columns: 2, width: 2, columnHeights: [0.1 + 0.2, 0.3])
        #expect(masonry.place(Self.size(1, 1)).column == 0)
        var real = Masonry(columns: 2, width: 2, columnHeights: [0.3001, 0.3])
        #expect(real.place(Self.size(1, 1)).column == 1)
    }

    @Test("spacing sits between columns and between frames of one column, never before the first")
    func spacingBetweenFrames() {
        var masonry = Masonry(columns: 2, width: 610, spacing: 10)
        #expect(masonry.columnWidth == 300)
        let frames = masonry.place([Self.size(4, 3), nil, Self.size(3, 2)])
        #expect(frames[0] == .init(column: 0, x: 0, y: 0, width: 300, height: 225))
        #expect(frames[1] == .init(column: 1, x: 310, y: 0, width: 300, height: 300))
        #expect(frames[2] == .init(column: 0, x: 0, y: 235, width: 300, height: 200))
        #expect(masonry.columnHeights == [435, 300])
    }

    @Test("an unknown or unusable size is placed as a square")
    func unknownIsSquare() {
        var masonry = Masonry(columns: 1, width: 120)
        let frames = masonry.place([nil, Self.size(0, 10), Self.size(.nan, 1)])
        #expect(frames.map(\.height) == [120, 120, 120])
    }

    @Test("two pages laid out with the returned heights give exactly the frames of one call")
    func pagingMatchesOneCall() {
        var sizes: [Masonry.Size?] = []
        for n in 0..<40 {
            let width = Double(300 + n * 37 % 500)
            let height = Double(200 + n * 53 % 700)
            sizes.append(n % 7 == 0 ? nil : Self.size(width, height))
        }
        var whole = Masonry(columns: 3, width: 1000, spacing: 7)
        let all = whole.place(sizes)
        var first = Masonry(columns: 3, width: 1000, spacing: 7)
        let page1 = first.place(Array(sizes[..<17]))
        var second = Masonry(columns: 3, width: 1000, spacing: 7, columnHeights: first.columnHeights)
        let page2 = second.place(Array(sizes[17...]))
        #expect(page1 + page2 == all)
        #expect(second.columnHeights == whole.columnHeights)
    }

    @Test("coordinates are unrounded doubles straight from the formulas")
    func coordinatesAreExact() {
        var masonry = Masonry(columns: 3, width: 1000, spacing: 7)
        let columnWidth = (1000 - 7 * 2) / 3.0
        #expect(masonry.columnWidth == columnWidth)
        #expect(columnWidth != columnWidth.rounded())
        let frames = masonry.place([Self.size(3, 2), Self.size(3, 2), Self.size(3, 2), Self.size(7, 3)])
        #expect(frames[1].x == 1 * (columnWidth + 7))
        #expect(frames[2].x == 2 * (columnWidth + 7))
        #expect(frames[0].height == columnWidth * 2 / 3)
        #expect(frames[3].y == columnWidth * 2 / 3 + 7)
        #expect(frames[3].height == columnWidth * 3 / 7)
    }
}
