import ProviderSimulator

/// The demo's loopback server: the three provider APIs (`ProviderAPISimulator`) with image
/// URLs pointing back at the same server, which generates each picture at the size the API
/// answer claimed (`SimulatedImageRoute`). Its keys are the ones `DemoConfig` writes.
enum DemoSimulator {
    /// The keys the demo's config carries; placeholders the simulator accepts, not secrets.
    static let keys = ["unsplash": "demo-unsplash-key", "flickr": "demo-flickr-key", "pixabay": "demo-pixabay-key"]

    /// Starts the simulator on a free loopback port.
    static func start() async throws -> SimulatedProviders {
        try await SimulatedProviders.start(keys: keys, fallback: SimulatedImageRoute.handler)
    }
}
