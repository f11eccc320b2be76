import ProviderSimulator

/// The demo's loopback servers: the three provider APIs (`ProviderAPISimulator`), and an
/// image server (`DemoImageServer`) that generates each picture at the size the API answer
/// claimed and sends it at a network-like pace. Its keys are the ones `DemoConfig` writes.
struct DemoSimulator: Sendable {
    /// The keys the demo's config carries; placeholders the simulator accepts, not secrets.
    static let keys = ["unsplash": "demo-unsplash-key", "flickr": "demo-flickr-key", "pixabay": "demo-pixabay-key"]

    /// The provider APIs; their image URLs point at `images`.
    let providers: SimulatedProviders
    /// The paced image server.
    let images: LoopbackHTTPServer

    /// Starts both on free loopback ports.
    static func start() async throws -> DemoSimulator {
        let images = try await DemoImageServer.start()
        do {
            let providers = try await SimulatedProviders.start(keys: keys, imageBaseURL: images.baseURL)
            return DemoSimulator(providers: providers, images: images)
        } catch {
            await images.shutdown()
            throw error
        }
    }

    /// The base URL the daemon's `api_url`s are built on.
    var baseURL: String { providers.baseURL }

    /// Stops both servers.
    func shutdown() async {
        await providers.shutdown()
        await images.shutdown()
    }
}
