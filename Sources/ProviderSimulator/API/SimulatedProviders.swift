/// A running loopback server with the three provider APIs, their image URLs pointing back at
/// it: what a test or the demo starts in one line.
///
/// Paths the API simulator does not know go to `fallback` (for example the image half of the
/// simulator), else 404.
public final class SimulatedProviders: Sendable {
    /// The HTTP server (its port, its shutdown).
    public let server: LoopbackHTTPServer
    /// The API half: counts, quotas, faults, totals.
    public let api: ProviderAPISimulator

    /// Starts a server on a free port; image URLs use this server's `baseURL` unless
    /// `imageBaseURL` says otherwise.
    public static func start(keys: [String: String] = ProviderAPISimulator.defaultKeys, imageBaseURL: String? = nil,
                             fallback: LoopbackHTTPServer.Handler? = nil) async throws -> SimulatedProviders {
        let api = ProviderAPISimulator(keys: keys)
        let server = try await LoopbackHTTPServer { request in
            if let answer = api.handle(request) { return answer }
            return fallback?(request) ?? .text("not found", status: 404)
        }
        api.setImageBaseURL(imageBaseURL ?? server.baseURL)
        return SimulatedProviders(server: server, api: api)
    }

    init(server: LoopbackHTTPServer, api: ProviderAPISimulator) {
        self.server = server
        self.api = api
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { server.baseURL }

    /// The `api_url` to configure for a provider (`unsplash`, `flickr`, `pixabay`).
    public func apiURL(for provider: String) -> String {
        ProviderAPISimulator.apiURL(for: provider, baseURL: server.baseURL)
    }

    /// Stops the server; later requests fail to connect (a provider "cannot be reached").
    public func shutdown() async { await server.shutdown() }
}
