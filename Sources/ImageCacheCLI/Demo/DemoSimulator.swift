import ProviderSimulator

/// The routes the demo's loopback server answers.
///
/// This build has only the bare `LoopbackHTTPServer`; the provider APIs and image routes
/// are being added to ProviderSimulator separately. Until they land here, every request is
/// answered 404 with a body saying so: a search that reaches it fails honestly
/// (upstream_error) instead of being given invented photos. Replace `handler` with the
/// simulator's routes when they exist.
enum DemoSimulator {
    static let handler: LoopbackHTTPServer.Handler = { request in
        .text("imagecache demo: no simulated route for \(request.path) in this build\n", status: 404)
    }
}
