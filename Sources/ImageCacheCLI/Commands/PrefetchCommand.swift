import ArgumentParser
import Foundation
import ImageCacheClient
import ImageCacheProtocol

/// `imagecache prefetch`: warms the cache with thumbnails, of photos and URLs named on the
/// command line or stdin, or of a search's first pages.
public struct PrefetchCommand: ClientCommand {
    public static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Warm the cache with thumbnails: of photo ids and URLs, or of a search's first pages.",
        discussion: """
        With photo ids (provider:id) or image URLs as arguments, or `-` to read them from \
        stdin (one or more per line, blank lines and lines starting with # skipped), those \
        are prefetched. With words instead, pages 1…N of that search are, every photo found. \
        Mixing the two is an error. The daemon fetches at background priority, below any \
        visible thumbnail; one progress bar (stderr) counts the items until each has landed \
        or failed. Ctrl-C withdraws what is still queued. Exits 1 when any item failed.

        EXAMPLES
          imagecache prefetch sunset beach
          imagecache prefetch forest --pages 3 --provider pixabay --size 512
          imagecache prefetch unsplash:Dwu85P9SOIk https://example.com/a.jpg
          imagecache search red fox --ndjson | jq -r .id | imagecache prefetch -
        """)

    @OptionGroup public var global: GlobalOptions

    @Argument(help: ArgumentHelp("Photo ids or URLs (`-` reads them from stdin), or words to search for.", valueName: "item|word"))
    public var arguments: [String] = []

    @Option(help: "With words: how many pages of results to warm.")
    public var pages: Int = 1

    @Option(help: "With words: unsplash, flickr or pixabay (default: the daemon's default_provider).",
            completion: .list(Completions.providers))
    public var provider: String?

    @Option(name: .customLong("per-page"), help: "With words: results per page.")
    public var perPage: Int?

    @Option(help: "Pixel width to warm (default: the daemon's thumbnail_size).")
    public var size: Int?

    public init() {}

    /// What the arguments name: images, or the words of a search.
    public enum Target: Equatable, Sendable {
        /// Photo ids and URLs, in order, each once; `readStdin` when `-` was among them.
        case images([ImageReference], readStdin: Bool)
        /// The query.
        case search(String)
    }

    /// Whether a word names an image: a URL, or a photo id (`provider:id`, no spaces).
    static func namesImage(_ word: String) -> Bool {
        if isURL(word) { return true }
        guard let colon = word.firstIndex(of: ":"), colon != word.startIndex, word.index(after: colon) != word.endIndex else { return false }
        return !word.contains(where: \.isWhitespace)
    }

    /// The arguments read as images or as search words; mixed is a usage error.
    public func target() throws -> Target {
        if arguments.isEmpty { throw ValidationError("Name photo ids or URLs (or `-` for stdin), or words to search for.") }
        let images = arguments.filter { $0 == "-" || Self.namesImage($0) }
        if images.isEmpty { return .search(arguments.joined(separator: " ")) }
        guard images.count == arguments.count else {
            let word = arguments.first { $0 != "-" && !Self.namesImage($0) } ?? ""
            throw ValidationError("'\(word)' is neither a photo id (provider:id) nor a URL: give images, or words to search for, not both.")
        }
        if let job = arguments.first(where: JobID.looksLikeJobID) { try ImageArgument.check(job) }
        return .images(Self.unique(arguments.filter { $0 != "-" }.map(imageReference)), readStdin: arguments.contains("-"))
    }

    /// The images of stdin's text: whitespace-separated words, `#` comments skipped.
    static func images(fromStdin text: String) throws -> [ImageReference] {
        var found: [ImageReference] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            for word in trimmed.split(whereSeparator: \.isWhitespace).map(String.init) {
                guard namesImage(word) else {
                    throw UsageError("stdin line \(number + 1): '\(word)' is neither a photo id (provider:id) nor a URL")
                }
                found.append(imageReference(word))
            }
        }
        return found
    }

    static func unique(_ images: [ImageReference]) -> [ImageReference] {
        var seen = Set<ImageReference>()
        return images.filter { seen.insert($0).inserted }
    }

    public func validate() throws {
        _ = try target()
        if pages < 1 { throw ValidationError("--pages must be 1 or more.") }
        if let size, !(1...ThumbnailLimits.maxSize).contains(size) {
            throw ValidationError("--size must be between 1 and \(ThumbnailLimits.maxSize).")
        }
    }

    public func run(connection: ImageCacheConnection) async throws {
        var images: [ImageReference]
        switch try target() {
        case .images(let named, let readStdin):
            images = named
            if readStdin {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                images = Self.unique(images + (try Self.images(fromStdin: String(decoding: data, as: UTF8.self))))
            }
        case .search(let query):
            var ids: [String] = []
            for page in 1...pages {
                let result = try await connection.search(SearchParams(query: query, provider: provider, page: page, perPage: perPage))
                // Pages of a live feed can overlap; each photo is prefetched (and counted) once.
                ids.append(contentsOf: result.photos.map(\.id).filter { !ids.contains($0) })
                if !result.hasMore { break }
            }
            images = ids.map(ImageReference.photo)
        }
        let notifications = connection.notifications()
        let photos = images.compactMap(\.photoID)
        let urls = images.compactMap(\.urlString)
        let queued = images.isEmpty ? PrefetchResult(queued: 0)
            : try await connection.prefetch(PrefetchParams(photos: photos, urls: urls.isEmpty ? nil : urls, size: size))
        let quiet = global.jsonOutput
        let keys = images.map(\.description)
        let socketPath = connection.socketPath
        let outcome = try await Interrupts.race { [keys] in
            try await Self.follow(ids: keys, notifications: notifications, json: quiet, socketPath: socketPath)
        }
        let summary = PrefetchSummary(queued: queued.queued, photos: images.count, ok: outcome.ok, failed: outcome.failed)
        if global.jsonOutput {
            try JSONOutput.emit(summary, global: global)
        } else {
            Output.line("prefetched \(outcome.ok) of \(Units.count(images.count, "image")) (\(queued.queued) needed the network), \(outcome.failed.count) failed")
            for (id, error) in outcome.failed.sorted(by: { $0.key < $1.key }) { Output.line("  \(id): \(error)") }
        }
        if !outcome.failed.isEmpty { throw ExitCode(ExitStatus.failure.rawValue) }
    }

    /// Waits for a `prefetch.finished` for every image (named by its photo id or URL),
    /// drawing one bar on stderr that counts them.
    static func follow(ids: [String], notifications: AsyncStream<ServerNotification>, json: Bool, socketPath: String) async throws
        -> (ok: Int, failed: [String: String]) {
        var pending = Set(ids)
        if pending.isEmpty { return (0, [:]) }
        var ok = 0
        var failed: [String: String] = [:]
        var board = ProgressBoard(terminal: json ? Terminal(isTTY: false, width: 100) : Terminal.progress())
        let start = MonotonicClock.now()
        let bar = board.add(ProgressItem(label: "prefetch", total: ids.count, countsItems: true), now: start)
        if !json { Output.progress(bar.output) }
        for await note in notifications {
            if pending.isEmpty { break }
            guard case .prefetchFinished(let f) = note, pending.remove(f.image.description) != nil else { continue }
            let id = f.image.description
            if f.ok { ok += 1 } else { failed[id] = f.error.map { "\($0.kind.rawValue): \($0.message)" } ?? "failed" }
            let now = MonotonicClock.now()
            let done = pending.isEmpty
            let text = board.update(bar.index, now: now) { item in
                item.received = ok + failed.count
                item.elapsed = now - start
                if done { item.outcome = failed.isEmpty ? "done" : "\(failed.count) failed" }
            }
            if !json { Output.progress(text) }
            if done { break }
        }
        if !pending.isEmpty {
            throw ImageCacheClientError.connectionClosed(socketPath: socketPath, reason: "the daemon closed the connection before every prefetch "
                                                         + "finished; the images it fetched stay in its cache")
        }
        return (ok, failed)
    }
}

/// `imagecache prefetch --json`'s answer.
public struct PrefetchSummary: Codable, Sendable {
    /// Items the daemon had to queue (the rest were already cached).
    public var queued: Int
    /// Images asked for (photos found by the searches, or named).
    public var photos: Int
    /// Items now in the cache.
    public var ok: Int
    /// Failed items by photo id or URL, with the error.
    public var failed: [String: String]
}
