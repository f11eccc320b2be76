/// The shortest-column masonry of `layout` (docs/protocol.md), as a pure computation: no I/O, no
/// lookups, so the daemon, the CLI and tests get the same frames from the same inputs.
///
/// Each item goes to the column whose height is least (the leftmost of equal ones), at the
/// column width `(width - spacing × (columns - 1)) / columns`, as tall as its aspect ratio
/// makes it; an item whose size is unknown is placed as a square. A column that already holds
/// something (height above 0) gets `spacing` before its next item, so the heights returned can
/// be passed back in to place the next page exactly where one call with both pages would have.
///
/// Coordinates are not rounded: they are doubles computed straight from the formulas
/// (`x = column × (columnWidth + spacing)`, `height = columnWidth × h / w`), because a client
/// drawing in points wants the fractions, and rounding here would make two pages laid out
/// separately drift from one page laid out at once. Heights are compared with a tolerance of
/// one billionth (relative), so the last-bit differences of floating-point sums never break a
/// tie that is one mathematically.
package struct Masonry: Sendable {
    /// One item's size; only its aspect ratio matters.
    public struct Size: Sendable, Hashable {
        /// Width in any unit, above 0.
        public var width: Double
        /// Height in the same unit, above 0.
        public var height: Double

        /// A size; non-positive or non-finite sides make the item count as unknown.
        public init(width: Double, height: Double) {
            self.width = width
            self.height = height
        }

        var isUsable: Bool { width.isFinite && height.isFinite && width > 0 && height > 0 }
    }

    /// Where one item went.
    package struct Frame: Sendable, Hashable {
        /// 0-based column.
        package var column: Int
        /// Left edge.
        public var x: Double
        /// Top edge.
        public var y: Double
        /// The column width.
        public var width: Double
        /// The column width scaled by the item's aspect ratio (the column width when unknown).
        public var height: Double
    }

    /// The width every frame gets: `(width - spacing × (columns - 1)) / columns`.
    package let columnWidth: Double
    /// The gap between columns, and between frames of one column.
    package let spacing: Double
    /// Each column's height so far (the bottom of its last frame).
    package private(set) var columnHeights: [Double]

    /// A grid of `columns` columns across `width`, starting at `columnHeights` (all 0 when nil).
    ///
    /// The caller validates the numbers (the daemon does so in `LayoutParams.validate`):
    /// `columns ≥ 1`, `width > 0`, `spacing ≥ 0`, a positive column width and one finite,
    /// non-negative height per column.
    public init(columns: Int, width: Double, spacing: Double = 0, columnHeights: [Double]? = nil) {
        precondition(columns >= 1, "a masonry needs at least one column")
        self.spacing = spacing
        columnWidth = (width - spacing * Double(columns - 1)) / Double(columns)
        self.columnHeights = columnHeights ?? Array(repeating: 0, count: columns)
        precondition(self.columnHeights.count == columns, "one height per column")
    }

    /// Places the next item below the shortest column and returns its frame. A nil (or
    /// unusable) size places a square.
    package mutating func place(_ size: Size?) -> Frame {
        let column = shortestColumn()
        let top = columnHeights[column]
        let y = top > 0 ? top + spacing : 0
        let height: Double
        if let size, size.isUsable {
            height = columnWidth * size.height / size.width
        } else {
            height = columnWidth
        }
        columnHeights[column] = y + height
        return Frame(column: column, x: Double(column) * (columnWidth + spacing), y: y, width: columnWidth, height: height)
    }

    /// Places every item in order.
    package mutating func place(_ sizes: [Size?]) -> [Frame] {
        sizes.map { place($0) }
    }

    /// The leftmost column of least height, treating heights within the tie tolerance as
    /// equal.
    private func shortestColumn() -> Int {
        var best = 0
        for column in columnHeights.indices.dropFirst() {
            let current = columnHeights[best]
            if columnHeights[column] < current - Self.tolerance(current) { best = column }
        }
        return best
    }

    /// How far apart two heights may be and still count as a tie: one billionth of the height
    /// (at least one billionth of a unit), far below any difference a drawn pixel shows, far
    /// above the rounding error of a few thousand additions of doubles.
    static func tolerance(_ height: Double) -> Double {
        1e-9 * max(1, abs(height))
    }
}
