import Foundation
import ImageCacheClient
import ImageCacheKit

/// The chaos soak's users, each on its own connection: searching and paging, showing and
/// recycling thumbnails (flings included: a slot shown with a new image before the old one
/// arrived), prefetching, showing a small hot set again and again (the memory hits whose latency
/// is compared at rest and under faults), saving downloads, watching and cancelling them, and
/// disconnecting with requests in flight. Every call is bounded; each outcome goes to the ledger.
struct ChaosClients: Sendable {
    let socket: String
    let imageBase: String
    let downloads: String
    let ledger: ChaosLedger
    /// The longest any one request may stay unanswered before it counts as hung.
    let bound: Double
    /// A user's pause between two actions, so that the load is many users' and not a benchmark's.
    let thinkMilliseconds: Int

    static let words = ["beach", "forest", "mountain", "city", "river", "desert", "snow", "bridge", "flower", "ocean",
                        "street", "garden", "castle", "harbor", "valley", "island", "market", "canyon", "meadow", "sunset"]
    static let providers = ["unsplash", "flickr", "pixabay"]
    /// Images shown again and again: after the first time they are memory hits.
    static let hotSeeds = (0..<16).map { String(format: "%016llx", 0xC0FFEE00 + UInt64($0)) }

    func hotURL(_ index: Int) -> String { "\(imageBase)/img/640x427/\(Self.hotSeeds[index % Self.hotSeeds.count]).jpg" }

    /// Runs `count` users until `stop` says so.
    func run(users count: Int, until stop: @escaping @Sendable () -> Bool) async {
        await withTaskGroup(of: Void.self) { group in
            for user in 0..<count {
                group.addTask { await self.user(user, until: stop) }
            }
        }
    }

    private func user(_ number: Int, until stop: @escaping @Sendable () -> Bool) async {
        var random = SystemRandomNumberGenerator()
        var round = 0
        while !stop() {
            round += 1
            let connection: ImageCacheConnection
            do {
                connection = try await ImageCacheConnection.connect(to: socket)
            } catch {
                if ledger.daemonAway {
                    ledger.record("connect", outcome: "refused: daemon restarting (planned)", refused: true)
                } else {
                    ledger.unexplained("connect", "\(error)")
                }
                try? await Task.sleep(for: .milliseconds(200))
                continue
            }
            for _ in 0..<(8 + Int.random(in: 0..<8, using: &random)) where !stop() {
                await action(Int.random(in: 0..<100, using: &random), connection: connection, user: number)
                try? await Task.sleep(for: .milliseconds(thinkMilliseconds))
            }
            if round % 3 == 0 {
                // Leave with requests in flight: a thumbnail of a new image and a search.
                let seed = String(format: "%016llx", UInt64.random(in: 1..<UInt64.max, using: &random))
                let pending = Task {
                    _ = try? await connection.showThumbnail(ThumbnailShowParams(
                        slot: 99, image: .url("\(imageBase)/img/1200x800/\(seed).jpg"), size: 256))
                }
                try? await Task.sleep(for: .milliseconds(Int.random(in: 0..<30, using: &random)))
                await connection.close()
                _ = await pending.value
                ledger.record("disconnect", outcome: "ok", refused: false)
            } else {
                await connection.close()
            }
        }
    }

    private func action(_ dice: Int, connection: ImageCacheConnection, user: Int) async {
        switch dice {
        case 0..<30: await searchAndShow(connection, fling: dice < 10)
        case 30..<70: await showHot(connection, index: Int.random(in: 0..<Self.hotSeeds.count))
        case 70..<85: await prefetch(connection)
        case 85..<93: await download(connection, cancel: dice >= 91)
        default: await stats(connection)
        }
    }

    /// Runs one bounded call and files its outcome.
    @discardableResult
    func call<T: Sendable>(_ method: String, _ body: @escaping @Sendable () async throws -> T) async -> T? {
        do {
            let value = try await withDeadline(bound, method) { try await body() }
            ledger.record(method, outcome: "ok", refused: false)
            return value
        } catch let error as RPCError {
            if error.kind == .internal {
                ledger.unexplained(method, "internal error: \(error)")
            } else {
                ledger.record(method, outcome: error.kind.rawValue, refused: true)
            }
        } catch is DeadlineExceeded {
            ledger.hung(method, seconds: bound)
        } catch let error as ImageCacheClientError {
            switch error {
            case .closedByClient:
                ledger.record(method, outcome: "refused: closed by this client", refused: true)
            case .connectionClosed, .daemonNotRunning, .connectFailed:
                if ledger.daemonAway {
                    ledger.record(method, outcome: "refused: daemon restarting (planned)", refused: true)
                } else {
                    ledger.unexplained(method, "\(error)")
                }
            default:
                ledger.unexplained(method, "\(error)")
            }
        } catch {
            ledger.unexplained(method, "\(error)")
        }
        return nil
    }

    private func searchAndShow(_ connection: ImageCacheConnection, fling: Bool) async {
        let query = Self.words.randomElement()!
        let provider = Self.providers.randomElement()!
        let page = Int.random(in: 1...3)
        guard let result = await call("search", { try await connection.search(query, provider: provider, page: page, perPage: 12) }) else {
            return
        }
        let photos = result.photos.map(\.id)
        let offset = Int.random(in: 0..<1000) * 16
        await withTaskGroup(of: Void.self) { group in
            for (slot, photo) in photos.prefix(8).enumerated() {
                group.addTask {
                    await call("thumbnail.show", { try await connection.showThumbnail(ThumbnailShowParams(slot: offset + slot, image: .photo(photo), size: 256)) })
                }
            }
            if fling {
                // The grid scrolls on: the same slots get the next images before the first arrive.
                try? await Task.sleep(for: .milliseconds(5))
                for (slot, photo) in photos.dropFirst(8).prefix(8).enumerated() {
                    group.addTask {
                        await call("thumbnail.show", { try await connection.showThumbnail(ThumbnailShowParams(slot: offset + slot, image: .photo(photo), size: 256)) })
                    }
                }
            }
        }
        for slot in 0..<min(8, photos.count) {
            await call("thumbnail.recycle", { try await connection.recycleThumbnail(slot: offset + slot) })
        }
    }

    private func showHot(_ connection: ImageCacheConnection, index: Int) async {
        let url = hotURL(index)
        let start = ContinuousClock.now
        guard let result = await call("thumbnail.show", {
            try await connection.showThumbnail(ThumbnailShowParams(slot: index, image: .url(url), size: 256, view: "hot"))
        }) else { return }
        if result.source == .memory { ledger.memoryHit(microseconds: (ContinuousClock.now - start) / .microseconds(1)) }
    }

    private func prefetch(_ connection: ImageCacheConnection) async {
        let urls = (0..<6).map { _ in "\(imageBase)/img/800x533/\(String(format: "%016llx", UInt64.random(in: 1..<1 << 20))).jpg" }
        await call("prefetch", { try await connection.prefetch(PrefetchParams(urls: urls, size: 256)) })
        if Bool.random() { await call("prefetch.cancel", { try await connection.cancelPrefetch() }) }
    }

    private func download(_ connection: ImageCacheConnection, cancel: Bool) async {
        let seed = String(format: "%016llx", UInt64.random(in: 1..<1 << 24))
        let url = "\(imageBase)/img/1600x1067/\(seed).jpg"
        guard let started = await call("download", {
            try await connection.download(DownloadParams(image: .url(url), directory: downloads, filename: "\(seed).jpg"))
        }) else { return }
        ledger.downloadStarted(job: started.job, url: url)
        if cancel {
            await call("download.cancel", { try await connection.cancelDownload(job: started.job) })
        } else {
            await call("download.watch", { try await connection.watchDownload(job: started.job) })
            await call("download.status", { try await connection.downloadStatus(job: started.job) })
        }
    }

    private func stats(_ connection: ImageCacheConnection) async {
        await call("stats", { try await connection.stats() })
        await call("download.list", { try await connection.downloads() })
    }
}
