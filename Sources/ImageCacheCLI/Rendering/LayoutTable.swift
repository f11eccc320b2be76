import ImageCacheProtocol

/// `imagecache layout`'s table: one row per frame (photo, column, x, y, width, height, where
/// its dimensions came from) and the column heights to pass for the next page.
public enum LayoutTable {
    /// The table, lines joined with `\n`.
    public static func render(_ result: LayoutResult, width: Int) -> String {
        let idWidth = min(32, max(5, result.frames.map { DisplayWidth.of($0.photo) }.max() ?? 0))
        func row(_ cells: [String]) -> String {
            var line = DisplayWidth.pad(cells[0], to: idWidth)
            for (i, cell) in cells.dropFirst().enumerated() {
                line += "  " + DisplayWidth.pad(cell, to: i == 5 ? 8 : 7, alignRight: i < 5)
            }
            return DisplayWidth.truncate(SearchTable.trimTrailing(line), to: width)
        }
        var lines = [row(["PHOTO", "COLUMN", "X", "Y", "WIDTH", "HEIGHT", "DIMS"])]
        for f in result.frames {
            lines.append(row([f.photo, String(f.column), number(f.x), number(f.y), number(f.width), number(f.height), f.dims.rawValue]))
        }
        lines.append("column heights: " + result.columnHeights.map(number).joined(separator: ", "))
        let unknown = result.frames.filter { $0.dims == .unknown }.count
        if unknown > 0 {
            lines.append("\(unknown) photo\(unknown == 1 ? " has" : "s have") unknown dimensions (placed as squares): show their thumbnails, then lay out again")
        }
        return lines.joined(separator: "\n")
    }

    /// A coordinate with at most one decimal, none when whole.
    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)
    }
}
