import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import TestSupport

/// A running provider simulator and a coordinator pointed at it over real HTTP.
struct SimulatorHarness {
    let sim: SimulatedProviders
    let fetcher: GatedFetcher
    let coordinator: SearchCoordinator
    let wallClock: WallClock

    /// Starts the simulator; `keys` are what the daemon is configured with (the simulator
    /// accepts `ProviderAPISimulator.defaultKeys`).
    static func start(keys: [ProviderID: String?] = [:], clock: any SchedulingClock = ContinuousSchedulingClock(),
                      store: any SearchPageStore = InMemorySearchPageStore(),
                      registry: PhotoRegistry = PhotoRegistry(), gateOpen: Bool = true) async throws -> SimulatorHarness {
        let sim = try await SimulatedProviders.start()
        let fetcher = GatedFetcher(URLSessionFetcher(), open: gateOpen)
        let wallClock = WallClock()
        let clients = ProviderID.allCases.map { id in
            let key = keys[id] ?? ProviderAPISimulator.defaultKeys[id.rawValue]
            let settings = ProviderSettings(apiKey: key, apiURL: sim.apiURL(for: id.rawValue))
            return ProviderClient(provider: makePhotoProvider(id, settings: settings), fetcher: fetcher,
                                  limiter: RateLimiter(provider: id, burst: 100, perSecond: 100, clock: clock))
        }
        let coordinator = SearchCoordinator(clients: clients, defaultProvider: .unsplash, store: store, registry: registry,
                                            searchTTL: .seconds(3600), clock: clock, wallClock: { wallClock.now })
        return SimulatorHarness(sim: sim, fetcher: fetcher, coordinator: coordinator, wallClock: wallClock)
    }

    /// `start(…)`, `body` with the harness, then `shutdown()`, also when `body` throws.
    static func with<Result>(keys: [ProviderID: String?] = [:], clock: any SchedulingClock = ContinuousSchedulingClock(),
                             store: any SearchPageStore = InMemorySearchPageStore(),
                             registry: PhotoRegistry = PhotoRegistry(), gateOpen: Bool = true,
                             _ body: (SimulatorHarness) async throws -> Result) async throws -> Result {
        try await finishing(try await start(keys: keys, clock: clock, store: store, registry: registry, gateOpen: gateOpen),
                            with: { await $0.shutdown() }, body)
    }

    var api: ProviderAPISimulator { sim.api }

    func shutdown() async { await sim.shutdown() }
}

/// Wall-clock time a test can move (page freshness is judged by wall time, since pages
/// outlive restarts).
final class WallClock: Sendable {
    private let date = LockedState(Date())
    var now: Date { date.withLock { $0 } }
    func advance(seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A `PhotoPersisting` over real files (one JSON file per photo), standing in for the cache
/// index that will back the registry.
struct FilePhotoStore: PhotoPersisting {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("photos-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func file(_ id: String) -> URL {
        directory.appendingPathComponent(id.replacingOccurrences(of: ":", with: "_") + ".json")
    }

    func save(_ photos: [ProviderPhoto]) async {
        for photo in photos {
            if let data = try? JSONEncoder().encode(photo) { try? data.write(to: file(photo.id), options: .atomic) }
        }
    }

    func load(id: String) async -> ProviderPhoto? {
        guard let data = try? Data(contentsOf: file(id)) else { return nil }
        return try? JSONDecoder().decode(ProviderPhoto.self, from: data)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

