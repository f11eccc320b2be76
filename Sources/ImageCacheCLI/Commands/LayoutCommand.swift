import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache layout`: the masonry frames of a search page, as a table and as an SVG.
public struct LayoutCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "layout",
        abstract: "Lay out a search page as a masonry grid; print the frames, write an SVG.",
        discussion: """
        Searches QUERY, then asks the daemon for the masonry layout of the page's photos \
        (each photo to the shortest column, keeping its aspect ratio). DIMS says where each \
        aspect ratio came from: decoded (read from the image), provider, or unknown (placed \
        as a square). With --svg, writes a picture of the grid: a rectangle per photo with its \
        id, and the thumbnail drawn in it (fetched through the daemon, so cached ones cost \
        nothing; --no-thumbnails draws rectangles only).

        EXAMPLES
          imagecache layout beach --columns 3 --width 900
          imagecache layout red fox --columns 4 --width 1200 --svg grid.svg
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("Words to search for (at least 3 characters in all).", valueName: "word"))
    public var words: [String] = []

    /// The words joined with single spaces.
    public var query: String { words.joined(separator: " ") }

    @Option(help: "Number of columns.")
    public var columns: Int

    @Option(help: "Total width of the grid, in pixels.")
    public var width: Double

    @Option(help: "Gap between columns and between frames, in pixels.")
    public var spacing: Double = 0

    @OptionGroup public var pageOptions: SearchPageOptions

    /// `--provider`, nil for the daemon's default.
    public var provider: String? { pageOptions.provider }
    /// `--page`, 1-based.
    public var page: Int { pageOptions.page }
    /// `--per-page`, nil for the daemon's default.
    public var perPage: Int? { pageOptions.perPage }

    @Option(help: ArgumentHelp("Write an SVG picture of the grid to this file.", valueName: "file"), completion: .file())
    public var svg: String?

    @Flag(name: .customLong("no-thumbnails"), help: "In the SVG, draw rectangles only.")
    public var noThumbnails = false

    public init() {}

    public func validate() throws {
        if words.isEmpty { throw ValidationError("Give words to search for.") }
        if !(1...LayoutParams.maxColumns).contains(columns) { throw ValidationError("--columns must be between 1 and \(LayoutParams.maxColumns).") }
        if !(width > 0) { throw ValidationError("--width must be more than 0.") }
        if spacing < 0 { throw ValidationError("--spacing must be 0 or more.") }
        if spacing * Double(columns - 1) >= width { throw ValidationError("--spacing leaves no room for the columns in --width.") }
    }

    public func run(connection: ImageCacheConnection) async throws {
        let search = try await connection.search(SearchParams(query: query, provider: provider, page: page, perPage: perPage))
        let params = LayoutParams(photos: search.photos.map(\.id), columns: columns, width: width, spacing: spacing)
        let layout = try await connection.layout(params)
        if let svg {
            var images: [String: (mime: String, bytes: Data)] = [:]
            if !noThumbnails {
                let size = max(1, min(ThumbnailLimits.maxSize, Int(params.columnWidth.rounded(.up))))
                for (slot, frame) in layout.frames.enumerated() {
                    let shown = try await connection.showThumbnail(
                        ThumbnailShowParams(slot: slot, image: .photo(frame.photo), size: size, inline: true))
                    if let data = shown.data.flatMap({ Data(base64Encoded: $0) }) { images[frame.photo] = (shown.mime, data) }
                }
            }
            let text = GridSVG.render(layout, width: width, images: images)
            do {
                try text.write(toFile: svg, atomically: true, encoding: .utf8)
            } catch {
                Output.error("imagecache: cannot write \(svg): \(error.localizedDescription)")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
            Output.note("wrote \(svg) (\(Units.count(layout.frames.count, "frame")), \(Units.count(images.count, "thumbnail")) embedded)")
        }
        if global.jsonOutput {
            try JSONOutput.emit(layout, records: layout.frames, global: global)
        } else {
            Output.line(LayoutTable.render(layout, width: Terminal.current().tableWidth))
        }
    }
}
