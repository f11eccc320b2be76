import ArgumentParser
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache prefetch`: warms the cache with the thumbnails of a search's first pages.
public struct PrefetchCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Warm the cache with the thumbnails of a search's first pages.",
        discussion: """
        Searches pages 1…N, asks the daemon to prefetch every photo found (background \
        priority, below any visible thumbnail), and shows one progress bar counting the \
        items until each has landed or failed. Ctrl-C withdraws what is still queued.

        EXAMPLES
          imagecache prefetch "sunset beach"
          imagecache prefetch forest --pages 3 --provider pixabay --size 512
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: "Words to search for (at least 3 characters).")
    public var query: String

    @Option(help: "How many pages of results to warm.")
    public var pages: Int = 1

    @Option(help: "unsplash, flickr or pixabay (default: the daemon's default_provider).")
    public var provider: String?

    @Option(name: .customLong("per-page"), help: "Results per page.")
    public var perPage: Int?

    @Option(help: "Pixel width to warm (default: the daemon's thumbnail_size).")
    public var size: Int?

    public init() {}

    public func validate() throws {
        if pages < 1 { throw ValidationError("--pages must be 1 or more.") }
        if let size, !(1...ThumbnailLimits.maxSize).contains(size) {
            throw ValidationError("--size must be between 1 and \(ThumbnailLimits.maxSize).")
        }
    }

    public func run(connection: ImageCacheConnection) async throws {
        var ids: [String] = []
        for page in 1...pages {
            let result = try await connection.search(SearchParams(query: query, provider: provider, page: page, perPage: perPage))
            // Pages of a live feed can overlap; each photo is prefetched (and counted) once.
            ids.append(contentsOf: result.photos.map(\.id).filter { !ids.contains($0) })
            if !result.hasMore { break }
        }
        let notifications = connection.notifications()
        let queued = try await connection.prefetch(PrefetchParams(photos: ids, size: size))
        let outcome = try await Interrupts.race { [ids, global] in
            try await Self.follow(ids: ids, notifications: notifications, json: global.json)
        }
        if global.json {
            Output.line(try JSONOutput.text(PrefetchSummary(queued: queued.queued, photos: ids.count, ok: outcome.ok, failed: outcome.failed)))
        } else {
            Output.line("prefetched \(outcome.ok) of \(ids.count) photos (\(queued.queued) needed the network), \(outcome.failed.count) failed")
            for (id, error) in outcome.failed.sorted(by: { $0.key < $1.key }) { Output.line("  \(id): \(error)") }
        }
        if !outcome.failed.isEmpty { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// Waits for a `prefetch.finished` for every id, drawing one bar that counts them.
    static func follow(ids: [String], notifications: AsyncStream<ServerNotification>, json: Bool) async throws
        -> (ok: Int, failed: [String: String]) {
        var pending = Set(ids)
        if pending.isEmpty { return (0, [:]) }
        var ok = 0
        var failed: [String: String] = [:]
        var board = ProgressBoard(terminal: json ? Terminal(isTTY: false, width: 100) : Terminal.current())
        let start = MonotonicClock.now()
        let bar = board.add(ProgressItem(label: "prefetch", total: ids.count, countsItems: true), now: start)
        if !json { Output.out(bar.output) }
        for await note in notifications {
            if pending.isEmpty { break }
            guard case .prefetchFinished(let f) = note, let id = f.image.photoID, pending.remove(id) != nil else { continue }
            if f.ok { ok += 1 } else { failed[id] = f.error.map { "\($0.kind.rawValue): \($0.message)" } ?? "failed" }
            let now = MonotonicClock.now()
            let done = pending.isEmpty
            let text = board.update(bar.index, now: now) { item in
                item.received = ok + failed.count
                item.elapsed = now - start
                if done { item.outcome = failed.isEmpty ? "done" : "\(failed.count) failed" }
            }
            if !json { Output.out(text) }
            if done { break }
        }
        if !pending.isEmpty { throw ImageCacheClientError.connectionClosed(socketPath: "", reason: "the daemon closed the connection before every prefetch finished") }
        return (ok, failed)
    }
}

/// `imagecache prefetch --json`'s answer.
public struct PrefetchSummary: Codable, Sendable {
    /// Items the daemon had to queue (the rest were already cached).
    public var queued: Int
    /// Photos found by the searches.
    public var photos: Int
    /// Items now in the cache.
    public var ok: Int
    /// Failed items by photo id, with the error.
    public var failed: [String: String]
}
