extension Methods {
    /// `layout`: masonry frames for photos from the dimensions the daemon knows; never fetches.
    public enum Layout: RPCMethod {
        public typealias Params = LayoutParams
        public typealias Result = LayoutResult
        public static let name = MethodName.layout
    }
}

/// Params of `layout`.
public struct LayoutParams: RPCParams, Hashable {
    /// Photo ids, in the order they are placed.
    public var photos: [String]
    /// Number of columns, 1…`LayoutParams.maxColumns`.
    public var columns: Int
    /// The grid's total width in points or pixels (any unit: frames come back in the same).
    public var width: Double
    /// Gap between columns and between frames of a column.
    public var spacing: Double
    /// Heights the columns already have (from a previous page's answer), one per column; nil means all 0.
    public var columnHeights: [Double]?

    /// More columns than this is not a grid anyone draws; the bound keeps a request small.
    public static let maxColumns = 1000

    public init(photos: [String], columns: Int, width: Double, spacing: Double = 0, columnHeights: [Double]? = nil) {
        self.photos = photos
        self.columns = columns
        self.width = width
        self.spacing = spacing
        self.columnHeights = columnHeights
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case photos, columns, width, spacing, columnHeights }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        photos = try c.decode([String].self, forKey: .photos)
        columns = try c.decode(Int.self, forKey: .columns)
        width = try c.decode(Double.self, forKey: .width)
        spacing = try c.decodeIfPresent(Double.self, forKey: .spacing) ?? 0
        columnHeights = try c.decodeIfPresent([Double].self, forKey: .columnHeights)
    }

    /// `(width - spacing × (columns - 1)) / columns`, the width every frame gets.
    public var columnWidth: Double {
        (width - spacing * Double(columns - 1)) / Double(columns)
    }

    public func validate() throws(RPCError) {
        if !(1...Self.maxColumns).contains(columns) {
            throw .invalidParam("columns", "'columns' must be between 1 and \(Self.maxColumns)")
        }
        if !(width.isFinite && width > 0) { throw .invalidParam("width", "'width' must be a number above 0") }
        if !(spacing.isFinite && spacing >= 0) { throw .invalidParam("spacing", "'spacing' must be 0 or more") }
        if columnWidth <= 0 {
            throw .invalidParam("spacing", "'spacing' leaves no room for the columns: (width - spacing × (columns - 1)) / columns must be above 0")
        }
        if let columnHeights {
            if columnHeights.count != columns {
                throw .invalidParam("columnHeights", "'columnHeights' must have one entry per column (\(columns)), got \(columnHeights.count)")
            }
            if let bad = columnHeights.firstIndex(where: { !($0.isFinite && $0 >= 0) }) {
                throw .invalidParam("columnHeights[\(bad)]", "'columnHeights' entries must be numbers of 0 or more")
            }
        }
        for (index, id) in photos.enumerated() { try FieldCheck.photoID(id, field: "photos[\(index)]") }
    }
}

/// Where a frame's aspect ratio came from. Decoded dimensions win over provider ones.
public enum DimensionSource: String, ParamEnum {
    /// Read from the image's header by a thumbnail fetch.
    case decoded
    /// Reported by the provider's API.
    case provider
    /// Not known yet: placed as a square; re-ask `layout` after `thumbnail.dimensions`.
    case unknown
}

/// One photo's place in the grid.
public struct LayoutFrame: Codable, Sendable, Hashable {
    /// The photo id.
    public var photo: String
    /// 0-based column.
    public var column: Int
    /// Left edge, from the grid's left.
    public var x: Double
    /// Top edge, from the grid's top (below the `columnHeights` passed in).
    public var y: Double
    /// The column width.
    public var width: Double
    /// The column width divided by the aspect ratio (the width itself for `unknown`).
    public var height: Double
    /// Where the aspect ratio came from.
    public var dims: DimensionSource
    /// The photo's placeholder colour, `#rrggbb` (docs/protocol.md, "Placeholders"), to paint
    /// the frame before its thumbnail arrives; absent while unknown.
    public var color: String?

    public init(photo: String, column: Int, x: Double, y: Double, width: Double, height: Double, dims: DimensionSource,
                color: String? = nil) {
        self.photo = photo
        self.column = column
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.dims = dims
        self.color = color
    }
}

/// The answer to `layout`.
public struct LayoutResult: Codable, Sendable, Hashable {
    /// One frame per photo, in the order given.
    public var frames: [LayoutFrame]
    /// Each column's height after these frames: pass it back to place the next page below.
    public var columnHeights: [Double]

    public init(frames: [LayoutFrame], columnHeights: [Double]) {
        self.frames = frames
        self.columnHeights = columnHeights
    }
}
