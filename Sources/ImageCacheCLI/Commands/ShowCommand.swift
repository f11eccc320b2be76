import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache show`: fetches one thumbnail through the daemon and says where it is.
public struct ShowCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Fetch a thumbnail through the daemon; print its path, dimensions and source.",
        discussion: """
        Shows the photo in slot 0 of a one-slot grid (thumbnail.show), with a progress bar \
        while it downloads. The path printed is a complete file inside the daemon's cache_dir, \
        readable for at least path_grace (default 60 s). Source is memory, disk or network.

        EXAMPLES
          imagecache show unsplash:Dwu85P9SOIk
          imagecache show https://images.example.com/a.jpg --size 512
          imagecache show pixabay:195893 --inline --json |
            jq -r .data | base64 -d > thumb.jpg
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("A photo id (provider:id) or an image URL.", valueName: "photo|url"))
    public var image: String

    @Option(help: "Pixel width you will draw (default: the daemon's thumbnail_size).")
    public var size: Int?

    @Flag(help: "Also receive the file's bytes in the answer (base64 in --json's data).")
    public var inline = false

    public init() {}

    public func validate() throws {
        try ImageArgument.check(image)
        if let size, !(1...ThumbnailLimits.maxSize).contains(size) {
            throw ValidationError("--size must be between 1 and \(ThumbnailLimits.maxSize).")
        }
    }

    /// The params this command line asks for.
    public var params: ThumbnailShowParams {
        ThumbnailShowParams(slot: 0, image: imageReference(image), size: size, inline: inline)
    }

    public func run(connection: ImageCacheConnection) async throws {
        let terminal = Terminal.progress()
        let notifications = connection.notifications()
        let showProgress = !global.jsonOutput
        let label = image
        // The bar's board comes back when the watcher is cancelled, so the bar can be
        // closed with the answer (the last progress notification may trail it).
        let watcher = Task { () -> (board: ProgressBoard, index: Int, start: Double)? in
            guard showProgress else { return nil }
            var board = ProgressBoard(terminal: terminal)
            let start = MonotonicClock.now()
            var index: Int?
            for await note in notifications {
                guard case .thumbnailProgress(let p) = note, p.slot == 0 else { continue }
                let now = MonotonicClock.now()
                if index == nil {
                    let added = board.add(ProgressItem(label: label, total: p.total), now: now)
                    index = added.index
                    Output.progress(added.output)
                }
                Output.progress(board.update(index!, now: now) { item in
                    item.received = p.received
                    item.total = p.total
                    item.elapsed = now - start
                })
            }
            return index.map { (board, $0, start) }
        }
        let params = self.params
        let result: ThumbnailShowResult
        do {
            result = try await Interrupts.race { try await connection.showThumbnail(params) }
        } catch {
            watcher.cancel()
            // The bar ends saying why: cancelled, recycled, failed: kind.
            if var drawn = await watcher.value {
                let now = MonotonicClock.now()
                Output.progress(drawn.board.update(drawn.index, now: now) { item in
                    item.elapsed = now - drawn.start
                    item.outcome = ProgressBar.outcome(of: error)
                })
            }
            throw error
        }
        watcher.cancel()
        if var drawn = await watcher.value {
            let now = MonotonicClock.now()
            Output.progress(drawn.board.update(drawn.index, now: now) { item in
                item.received = item.total ?? item.received
                item.elapsed = now - drawn.start
                item.outcome = "done"
            })
        }
        if global.jsonOutput {
            try JSONOutput.emit(result, global: global)
            return
        }
        Output.line(ShowSummary.render(result))
    }
}

/// `imagecache show`'s text answer.
public enum ShowSummary {
    /// Path, dimensions, size, type and where it came from.
    public static func render(_ r: ThumbnailShowResult) -> String {
        var lines = [
            "path    \(r.path)",
            "size    \(r.width)×\(r.height) px, \(Units.bytes(r.bytes)), \(r.mime)",
            "source  \(r.source.rawValue)\(r.source == .network ? " (downloaded now)" : " (cache hit)")",
        ]
        if let photo = r.photo { lines.insert("photo   \(photo)", at: 0) }
        if let data = r.data {
            let decoded = Data(base64Encoded: data)?.count
            lines.append("inline  \(decoded.map { "\(Units.bytes($0)) received in the answer" } ?? "data is not valid base64")")
        }
        return lines.joined(separator: "\n")
    }
}
