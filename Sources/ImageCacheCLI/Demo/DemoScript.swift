import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// The demo's story, step by step, against the real daemon. Each step calls real methods
/// and prints what came back; nothing is computed in place of the daemon.
public enum DemoScript {
    /// The steps in order.
    public static let steps: [DemoStep] = [hello, search, thumbnails, layout, searchAgain, download, stats]

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

    static let layout = DemoStep("masonry layout from the photos' dimensions (SVG written)") { ctx in
        let photos = try await ctx.state.requirePhotos()
        let result = try await ctx.connection.layout(LayoutParams(photos: photos.map(\.id), columns: 3, width: 900, spacing: 8))
        // Thumbnails the previous step delivered are drawn in their frames, read from the
        // paths the daemon gave (valid for path_grace).
        var images: [String: (mime: String, bytes: Data)] = [:]
        for (photo, shown) in await ctx.state.thumbnails {
            if let bytes = FileManager.default.contents(atPath: shown.path) { images[photo] = (shown.mime, bytes) }
        }
        try GridSVG.render(result, width: 900, images: images).write(toFile: ctx.svgPath, atomically: true, encoding: .utf8)
        // Where each frame's size came from: the provider's figures (confirmed by a decoded
        // thumbnail's aspect when one exists), a decoded thumbnail alone, or nothing (a square).
        let count = { (source: DimensionSource) in result.frames.filter { $0.dims == source }.count }
        return LayoutTable.render(result, width: ctx.width)
            + "\n\(result.frames.count) frames sized by: \(count(.provider)) provider, "
            + "\(count(.decoded)) decoded, \(count(.unknown)) unknown"
            + "\nSVG: \(ctx.svgPath) (\(images.count) thumbnails embedded)"
    }

    static let thumbnails = DemoStep("visible thumbnails load with progress; recycled ones are cancelled") { ctx in
        let photos = try await ctx.state.requirePhotos()
        let connection = ctx.connection
        // Recycling a slot that shows nothing is harmless, and tells whether this daemon has
        // the thumbnail methods at all (method_not_found makes the step a skip) before the
        // typed stats below, which need the sections those methods bring.
        _ = try await connection.recycleThumbnail(slot: 0)
        let before = try await connection.stats()
        let visible = Array(photos.prefix(6))
        let recycled = Array(photos.dropFirst(6).prefix(6))
        let watch = SlotWatch()
        let notifications = connection.notifications()
        let bars = SlotBars(terminal: Terminal.current())
        let progress = Task {
            for await note in notifications {
                switch note {
                case .thumbnailDimensions(let d):
                    await watch.mark(d.slot)
                case .thumbnailProgress(let p):
                    await watch.mark(p.slot, received: p.received, total: p.total)
                    Output.out(await bars.progress(slot: p.slot, photo: p.photo, received: p.received, total: p.total))
                default:
                    continue
                }
            }
            // The step ended or was interrupted: a bar still open gets its last frame.
            Output.out(await bars.endAll("cancelled"))
        }
        do {
            let lines = try await thumbnailLoads(visible: visible, recycled: recycled, connection: connection, watch: watch,
                                                 bars: bars, before: before, state: ctx.state)
            progress.cancel()
            await progress.value
            return lines
        } catch {
            progress.cancel()
            await progress.value
            throw error
        }
    }

    /// The thumbnails step's loads: the visible slots load, the others are recycled while
    /// loading (their bars end `recycled`); returns the step's report.
    private static func thumbnailLoads(visible: [Photo], recycled: [Photo], connection: ImageCacheConnection, watch: SlotWatch,
                                       bars: SlotBars, before: StatsResult, state: DemoState) async throws -> String {
        // Slots 0…5 stay on screen; slots 6… scroll away while loading: each is recycled as
        // soon as its bytes start flowing, while the visible ones go on.
        let visibleLoads = Task {
            try await withThrowingTaskGroup(of: (Int, String, ThumbnailShowResult).self) { group in
                for (slot, photo) in visible.enumerated() {
                    group.addTask { (slot, photo.id, try await connection.showThumbnail(ThumbnailShowParams(slot: slot, image: .photo(photo.id), size: 256))) }
                }
                var results: [(Int, String, ThumbnailShowResult)] = []
                for try await result in group { results.append(result) }
                return results.sorted { $0.0 < $1.0 }
            }
        }
        let doomed = recycled.enumerated().map { offset, photo in
            Task {
                do {
                    let shown = try await connection.showThumbnail(ThumbnailShowParams(slot: 6 + offset, image: .photo(photo.id), size: 256))
                    await watch.mark(6 + offset)  // ended before any progress: nothing to wait for
                    return shown
                } catch {
                    await watch.mark(6 + offset)
                    throw error
                }
            }
        }
        var recycledCount = 0
        var finishedFirst = 0
        for (offset, task) in doomed.enumerated() {
            let slot = 6 + offset
            await watch.waitUntilLoading(slot)
            if try await connection.recycleThumbnail(slot: slot).cancelled {
                recycledCount += 1
                Output.out(await bars.end(slot: slot, outcome: "recycled"))
            }
            switch await task.result {
            case .success:
                finishedFirst += 1
                Output.out(await bars.end(slot: slot, outcome: "done"))
            case .failure(let error):
                // Answered with an error before the recycle reached it: its bar says which
                // (a bar the recycle ended keeps `recycled`).
                Output.out(await bars.end(slot: slot, outcome: ProgressBar.outcome(of: error)))
            }
        }
        let shown = try await visibleLoads.value
        var lines: [String] = []
        for (slot, id, result) in shown {
            await state.addThumbnail(id, result)
            lines.append("slot \(slot): \(id) \(result.width)×\(result.height) \(Units.bytes(result.bytes)) from \(result.source.rawValue)")
        }
        let after = try await connection.stats()
        let recycledSlots = Set(recycled.indices.map { 6 + $0 })
        let sizes = await watch.sizes(of: recycledSlots)
        let discarded = after.network.bytesDiscarded - before.network.bytesDiscarded
        lines.append("recycled \(recycledCount) of \(recycled.count) slots while loading (\(finishedFirst) finished first)")
        lines.append("  their images are \(Units.bytes(sizes.total)) in all; \(Units.bytes(sizes.received)) had arrived when they were recycled, "
                     + "and the daemon counts \(Units.bytes(discarded)) received and thrown away by the cancelled transfers")
        let visibleSizes = await watch.sizes(of: Set(visible.indices))
        lines.append("  network for the whole step: \(Units.bytes(after.network.bytesReceived - before.network.bytesReceived)) received "
                     + "(the visible images are \(Units.bytes(visibleSizes.total))); "
                     + "\(Units.bytes(max(0, sizes.total - sizes.received))) of the recycled ones never crossed the network")
        guard recycledCount > 0 else {
            throw DemoFailure("no recycled slot was still loading, so nothing was cancelled:\n" + lines.joined(separator: "\n"))
        }
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
        let follower = DownloadFollower(jobs: [(photo.id, job.job)], terminal: Terminal.progress(), quiet: false,
                                        socketPath: ctx.connection.socketPath, socketFlag: ctx.connection.socketPath)
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

/// Which slots have started receiving bytes, so the demo recycles a slot while it loads
/// (not before its request reached the daemon, when there would be nothing to cancel).
actor SlotWatch {
    private var loading: Set<Int> = []
    private var waiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    /// The last progress of each slot: bytes received and the image's size.
    private var progress: [Int: (received: Int, total: Int?)] = [:]

    /// The slot reported progress or dimensions, or its request ended. A progress of 0
    /// bytes (the response head) does not count yet: the demo recycles once bytes flow.
    func mark(_ slot: Int, received: Int? = nil, total: Int? = nil) {
        if let received { progress[slot] = (received, total ?? progress[slot]?.total) }
        if let received, received == 0 { return }
        loading.insert(slot)
        for waiter in waiters.removeValue(forKey: slot) ?? [] { waiter.resume() }
    }

    /// What these slots had received at their last progress, and the size of their images.
    func sizes(of slots: Set<Int>) -> (received: Int, total: Int) {
        slots.reduce((0, 0)) { sum, slot in
            (sum.0 + (progress[slot]?.received ?? 0), sum.1 + (progress[slot]?.total ?? 0))
        }
    }

    /// Whether `slot` has received bytes (or its request ended).
    func isLoading(_ slot: Int) -> Bool { loading.contains(slot) }

    /// Returns once `slot` is loading (or its request has ended: the request's task marks
    /// it too, so this never outwaits it).
    func waitUntilLoading(_ slot: Int) async {
        if loading.contains(slot) { return }
        await withCheckedContinuation { waiters[slot, default: []].append($0) }
    }
}

/// The thumbnails step's bars, one per slot that reported progress: drawn from the
/// notifications, and ended with what became of each slot (`done`, `recycled`, `cancelled`
/// when the step stops first), so no bar stays frozen half-way.
actor SlotBars {
    private var board: ProgressBoard
    private var bars: [Int: Int] = [:]
    /// Outcomes of slots that ended before their first progress was drawn: the answers and
    /// the notifications arrive on separate paths, so a progress that comes late draws the bar
    /// already ended instead of opening one that nothing would end.
    private var endedBeforeDrawn: [Int: String] = [:]
    private let start = MonotonicClock.now()

    init(terminal: Terminal) {
        board = ProgressBoard(terminal: terminal)
    }

    /// A slot's progress; returns the text to write.
    func progress(slot: Int, photo: String?, received: Int, total: Int?) -> String {
        let now = MonotonicClock.now()
        var text = ""
        if bars[slot] == nil {
            let added = board.add(ProgressItem(label: "slot \(slot) \(photo ?? "")", total: total), now: now)
            bars[slot] = added.index
            text += added.output
        }
        guard let index = bars[slot], board.items[index].outcome == nil else { return text }
        let ended = endedBeforeDrawn.removeValue(forKey: slot)
        return text + board.update(index, now: now) { item in
            item.received = received
            item.total = total
            item.elapsed = now - start
            if let ended {
                item.outcome = ended
            } else if let total, received >= total {
                item.outcome = "done"
            }
        }
    }

    /// Ends a slot's bar with `outcome`, unless it has already ended; a slot without a bar yet
    /// keeps its first outcome for the bar a late progress draws.
    func end(slot: Int, outcome: String) -> String {
        guard let index = bars[slot] else {
            if endedBeforeDrawn[slot] == nil { endedBeforeDrawn[slot] = outcome }
            return ""
        }
        guard board.items[index].outcome == nil else { return "" }
        let now = MonotonicClock.now()
        return board.update(index, now: now) { item in
            item.elapsed = now - start
            item.outcome = outcome
        }
    }

    /// Ends every bar still open with `outcome`.
    func endAll(_ outcome: String) -> String {
        bars.keys.sorted().map { end(slot: $0, outcome: outcome) }.joined()
    }
}
