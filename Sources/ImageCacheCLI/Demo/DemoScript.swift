import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// The demo's story, step by step, against the real daemon. Each step calls real methods
/// and prints what came back; nothing is computed in place of the daemon.
public enum DemoScript {
    /// The steps in order.
    public static let steps: [DemoStep] = [hello, search, layout, thumbnails, searchAgain, download, stats]

    static let hello = DemoStep("hello: who answers on the socket") { ctx in
        let hello = try await ctx.connection.hello()
        return StatusSummary.render(hello, socketPath: ctx.connection.socketPath)
    }

    static let search = DemoStep("search with pagination: page 1 and page 2") { ctx in
        let query = ctx.state.query
        let first = try await ctx.connection.search(SearchParams(query: query, page: 1, perPage: 12))
        await ctx.state.setPhotos(first.photos)
        var text = SearchTable.render(first, width: ctx.width)
        if first.hasMore {
            let second = try await ctx.connection.search(SearchParams(query: query, page: 2, perPage: 12))
            text += "\n\n" + SearchTable.render(second, width: ctx.width)
        }
        return text
    }

    static let layout = DemoStep("masonry layout of page 1 (SVG written)") { ctx in
        let photos = try await ctx.state.requirePhotos()
        let result = try await ctx.connection.layout(LayoutParams(photos: photos.map(\.id), columns: 3, width: 900, spacing: 8))
        try GridSVG.render(result, width: 900).write(toFile: ctx.svgPath, atomically: true, encoding: .utf8)
        return LayoutTable.render(result, width: ctx.width) + "\nSVG: \(ctx.svgPath)"
    }

    static let thumbnails = DemoStep("visible thumbnails load with progress; recycled ones are cancelled") { ctx in
        let photos = try await ctx.state.requirePhotos()
        let before = try await ctx.connection.stats()
        let visible = Array(photos.prefix(6))
        let recycled = Array(photos.dropFirst(6).prefix(6))
        let connection = ctx.connection
        // Slots 6… show photos that scroll away at once: their requests are recycled.
        let doomed = recycled.enumerated().map { offset, photo in
            Task { try await connection.showThumbnail(ThumbnailShowParams(slot: 6 + offset, image: .photo(photo.id), size: 256)) }
        }
        var recycledCount = 0
        for offset in recycled.indices where try await connection.recycleThumbnail(slot: 6 + offset).cancelled { recycledCount += 1 }
        for task in doomed { _ = try? await task.value }
        var lines: [String] = []
        for (slot, photo) in visible.enumerated() {
            let shown = try await connection.showThumbnail(ThumbnailShowParams(slot: slot, image: .photo(photo.id), size: 256))
            lines.append("slot \(slot): \(photo.id) \(shown.width)×\(shown.height) \(Units.bytes(shown.bytes)) from \(shown.source.rawValue)")
        }
        let after = try await ctx.connection.stats()
        lines.append("recycled \(recycledCount) of \(recycled.count) loading slots; bytes received \(Units.bytes(after.network.bytesReceived - before.network.bytesReceived)), "
                     + "discarded on cancel \(Units.bytes(after.network.bytesDiscarded - before.network.bytesDiscarded))")
        return lines.joined(separator: "\n")
    }

    static let searchAgain = DemoStep("the same search again is answered from the cache") { ctx in
        let query = ctx.state.query
        let again = try await ctx.connection.search(SearchParams(query: query, page: 1, perPage: 12))
        guard again.fromCache else {
            throw DemoFailure("the repeated search was not answered from the cache (fromCache = false)")
        }
        return SearchTable.heading(again)
    }

    static let download = DemoStep("a full-size download to a folder") { ctx in
        let photo = try await ctx.state.requirePhotos()[0]
        let notifications = ctx.connection.notifications()
        let job = try await ctx.connection.download(DownloadParams(image: .photo(photo.id), variant: .full, directory: ctx.downloads))
        let follower = DownloadFollower(jobs: [(photo.id, job.job)], terminal: Terminal.current(), quiet: false)
        let outcomes = try await follower.follow(notifications)
        if let error = outcomes.first?.error { throw error }
        return DownloadSummary.render(outcomes)
    }

    static let stats = DemoStep("the daemon's stats") { ctx in
        StatsSummary.render(try await ctx.connection.call(method: MethodName.stats.rawValue))
    }
}

/// A step's check that did not hold.
public struct DemoFailure: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
