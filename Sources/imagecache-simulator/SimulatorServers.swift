import Foundation
import NIOConcurrencyHelpers
import ImageCacheSupport
import ProviderSimulator

/// The demo's loopback servers: the three provider APIs (`SimulatedProviders`), and an image
/// server (`DemoImageServer`) that generates each picture at the size the API answer claimed
/// and sends it at a network-like pace. Its keys are the ones the demo's config carries.
///
/// `GET /_log` on the API server answers what both halves saw (each provider's request URIs,
/// the image host's `DemoImageLog`), so a test driving the gallery in a browser can prove
/// which requests reached the "network".
struct SimulatorServers: Sendable {
    /// The keys the demo's config carries (`imagecache demo` writes the same); placeholders
    /// the simulator accepts, not secrets.
    static let keys = ["unsplash": "demo-unsplash-key", "flickr": "demo-flickr-key", "pixabay": "demo-pixabay-key"]

    /// The provider APIs; their image URLs point at `images`.
    let providers: SimulatedProviders
    /// The paced image server.
    let images: LoopbackHTTPServer
    /// What the image server served.
    let imageLog: DemoImageLog

    /// Starts both on free loopback ports.
    static func start() async throws -> SimulatorServers {
        let imageLog = DemoImageLog()
        let images = try await DemoImageServer.start(log: imageLog)
        let apiBox = APIBox()
        do {
            let providers = try await SimulatedProviders.start(keys: keys, imageBaseURL: images.baseURL) { request in
                guard request.path == "/_log", let api = apiBox.api else { return .text("not found", status: 404) }
                return logResponse(api: api, images: imageLog)
            }
            apiBox.set(providers.api)
            return SimulatorServers(providers: providers, images: images, imageLog: imageLog)
        } catch {
            await images.shutdown()
            throw error
        }
    }

    /// The base URL the daemon's `api_url`s are built on.
    var baseURL: String { providers.baseURL }

    /// Where both listen: the line written on stdout once they do.
    var announcement: SimulatorAnnouncement {
        SimulatorAnnouncement(api: baseURL, images: images.baseURL, log: baseURL + "/_log")
    }

    /// Stops both servers.
    func shutdown() async {
        await providers.shutdown()
        await images.shutdown()
    }

    /// `/_log`'s JSON.
    struct Log: Codable {
        /// Each provider's request URIs (path and query), oldest first.
        var api: [String: [String]]
        /// The image host's figures.
        var images: DemoImageLog.Snapshot
    }

    static func logResponse(api: ProviderAPISimulator, images: DemoImageLog) -> SimulatedResponse {
        var requests: [String: [String]] = [:]
        for provider in ProviderAPISimulator.providers {
            requests[provider] = api.requests(provider).map(\.uri)
        }
        let body = (try? JSONEncoder().encode(Log(api: requests, images: images.snapshot))) ?? Data("{}".utf8)
        return SimulatedResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body))
    }
}

/// The API simulator, known only once its server started (the fallback route is made before).
private final class APIBox: Sendable {
    private let box = NIOLockedValueBox<ProviderAPISimulator?>(nil)
    var api: ProviderAPISimulator? { box.withLockedValue { $0 } }
    func set(_ api: ProviderAPISimulator) { box.withLockedValue { $0 = api } }
}
