@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: the URL policy on every hop", .timeLimit(.minutes(2)))
struct NetworkURLPolicyTests {
    private func fetch(_ engine: TransferEngine, _ url: String) async -> (RPCError?, TransferResult?) {
        var result: TransferResult?
        let error = await rpcError {
            result = try await withTimeout(seconds: 30) { try await engine.start(TransferRequest(url: url)).result() }
        }
        return (error, result)
    }

    @Test("http is refused without allow_http, and nothing is requested")
    func httpRefused() async throws {
        let engine = NetworkFixture.engine { $0.allowHTTP = false }
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/p", body: try NetworkFixture.photo())
            let (error, _) = await fetch(engine, server.url("/p"))
            #expect(error?.kind == .forbidden)
            #expect(server.counters.totalRequests == 0)
        }
    }

    @Test("schemes other than http(s) are refused")
    func otherSchemesRefused() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        for url in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"] {
            let (error, _) = await fetch(engine, url)
            #expect(error?.kind == .forbidden, "\(url)")
        }
    }

    @Test("a host outside the image hosts and allowed_hosts is refused, and nothing is requested")
    func hostRefused() async throws {
        let engine = NetworkFixture.engine { $0.allowedHosts = ["images.example.org"] }
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            let (error, _) = await fetch(engine, server.url("/p"))
            #expect(error?.kind == .forbidden)
            #expect(server.counters.totalRequests == 0)
        }
    }

    @Test("a name allowed by name that resolves to a loopback address is refused on the resolved address")
    func resolvedLoopbackRefused() async throws {
        var network = NetworkFixture.configuration().network
        network.allowedHosts = []
        let policy = URLPolicy(network: network, extraHosts: ["localhost"])
        let engine = TransferEngine(configuration: NetworkFixture.configuration { $0.allowedHosts = [] },
                                    policy: policy, options: NetworkFixture.options())
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/p", body: try NetworkFixture.photo())
            let (error, _) = await fetch(engine, "http://localhost:\(server.http.port)/p")
            #expect(error?.kind == .forbidden)
            #expect(error?.message.contains("internal address") == true)
            #expect(server.counters.totalRequests == 0)
        }
    }

    @Test("a name is allowed when it resolves to an address listed in allowed_hosts")
    func nameResolvingToListedAddress() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()  // allowed_hosts = 127.0.0.1
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/p", body: photo)
            let (error, result) = await fetch(engine, "http://localhost:\(server.http.port)/p")
            #expect(error == nil)
            #expect(result?.body == .memory(photo))
        }
    }

    @Test("redirects are followed hop by hop, up to five")
    func fiveRedirectsFollowed() async throws {
        let photo = try NetworkFixture.photo()
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            for hop in 0..<5 { server.serve("/r\(hop)", body: [], faults: [.redirect(to: "/r\(hop + 1)")]) }
            server.serve("/r5", body: photo)
            let (error, result) = await fetch(engine, server.url("/r0"))
            #expect(error == nil)
            #expect(result?.body == .memory(photo))
            #expect(result?.finalURL == server.url("/r5"))
            #expect(result?.requests == 6)
        }
    }

    @Test("a sixth redirect → upstream_error")
    func sixRedirectsFail() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            for hop in 0..<6 { server.serve("/r\(hop)", body: [], faults: [.redirect(to: server.url("/r\(hop + 1)"), status: 301)]) }
            server.serve("/r6", body: try NetworkFixture.photo())
            let (error, _) = await fetch(engine, server.url("/r0"))
            #expect(error?.kind == .upstreamError)
            #expect(server.counters.requests("/r6") == 0)
        }
    }

    @Test("a redirect loop → upstream_error")
    func redirectLoop() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/a", body: [], faults: [.redirect(to: "/b")])
            server.serve("/b", body: [], faults: [.redirect(to: "/a")])
            let (error, _) = await fetch(engine, server.url("/a"))
            #expect(error?.kind == .upstreamError)
            #expect(error?.message.contains("loop") == true)
            #expect(server.counters.totalRequests == 2)
        }
    }

    @Test("a redirect to file:// → forbidden")
    func redirectToFile() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/a", body: [], faults: [.redirect(to: "file:///etc/passwd")])
            let (error, _) = await fetch(engine, server.url("/a"))
            #expect(error?.kind == .forbidden)
        }
    }

    @Test("a redirect to another scheme (ftp) → forbidden")
    func redirectAcrossSchemes() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/a", body: [], faults: [.redirect(to: "ftp://127.0.0.1/x")])
            let (error, _) = await fetch(engine, server.url("/a"))
            #expect(error?.kind == .forbidden)
        }
    }

    @Test("a redirect from https-only policy down to http → forbidden")
    func redirectDowngrade() throws {
        // The hop check is the same function as the first URL's: with allow_http off, an http
        // hop is refused whatever the first URL was.
        let policy = URLPolicy(network: NetworkFixture.configuration { $0.allowHTTP = false }.network,
                               extraHosts: ["images.unsplash.com"])
        #expect(throws: TransferError.self) { try policy.check("http://images.unsplash.com/photo") }
        #expect((try? policy.check("https://images.unsplash.com/photo")) != nil)
    }

    @Test("a redirect to a private address → forbidden, and nothing there is requested")
    func redirectToPrivateAddress() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/a", body: [], faults: [.redirect(to: "http://10.0.0.7/p")])
            let (error, _) = await fetch(engine, server.url("/a"))
            #expect(error?.kind == .forbidden)
        }
    }

    @Test("a redirect hop whose address is loopback but not listed is refused at the socket")
    func redirectHopResolvedAddressRefused() async throws {
        var network = NetworkFixture.configuration().network
        network.allowedHosts = ["127.0.0.1"]
        let policy = URLPolicy(network: network, extraHosts: ["::1"])
        let engine = TransferEngine(configuration: NetworkFixture.configuration(), policy: policy, options: NetworkFixture.options())
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            server.serve("/a", body: [], faults: [.redirect(to: "http://[::1]:\(server.http.port)/p")])
            let (error, _) = await fetch(engine, server.url("/a"))
            #expect(error?.kind == .forbidden)
            #expect(error?.message.contains("internal address") == true)
        }
    }

    @Test("a configured proxy is used; without one the request goes direct")
    func proxyFromConfigOnly() async throws {
        let photo = try NetworkFixture.photo()
        try await NetworkFixture.withServer { proxy in
            try await NetworkFixture.withServer { origin in
                proxy.serve("/p", body: photo)
                origin.serve("/p", body: photo)
                let direct = NetworkFixture.engine()
                defer { direct.shutdown() }
                _ = await fetch(direct, origin.url("/p"))
                #expect(origin.counters.requests("/p") == 1)
                #expect(proxy.counters.totalRequests == 0)

                let proxied = NetworkFixture.engine { $0.proxy = proxy.baseURL }
                defer { proxied.shutdown() }
                let (error, _) = await fetch(proxied, origin.url("/p"))
                #expect(error == nil)
                #expect(proxy.counters.proxied == 1)
                #expect(origin.counters.requests("/p") == 1)
            }
        }
    }

    @Test("without a configured proxy, CURLOPT_PROXY is set to \"\" so environment proxy variables are ignored")
    func environmentProxyIgnored() {
        // The integration test above shows the engine applies this value to every handle (a
        // configured proxy is used); an explicit "" is libcurl's documented way to disable
        // http_proxy/https_proxy/all_proxy. The process environment is not changed here:
        // setenv while other suites' threads read it is unsafe.
        var configuration = NetworkFixture.configuration()
        let environment = TransferEnvironment(configuration: configuration, policy: nil, options: NetworkFixture.options())
        #expect(environment.settings.proxyOption == "")
        configuration.network.proxy = "http://proxy.example:3128"
        environment.apply(configuration)  // a reload sets it for transfers queued after it
        #expect(environment.settings.proxyOption == "http://proxy.example:3128")
    }

    @Test("a reload's allowed hosts and limits apply to transfers queued after it")
    func reloadAppliesPolicyAndLimits() async throws {
        var configuration = NetworkFixture.configuration { $0.allowedHosts = [] }
        let engine = TransferEngine(configuration: configuration, options: NetworkFixture.options())
        defer { engine.shutdown() }
        try await NetworkFixture.withServer { server in
            let photo = try NetworkFixture.photo()
            server.serve("/p", body: photo)
            let (refused, _) = await fetch(engine, server.url("/p"))
            #expect(refused?.kind == .forbidden)
            #expect(server.counters.requests("/p") == 0)

            configuration.network.allowedHosts = ["127.0.0.1"]
            engine.apply(configuration)
            let (error, result) = await fetch(engine, server.url("/p"))
            #expect(error == nil && result?.status == 200)

            configuration.network.maxImageBytes = photo.count / 2
            engine.apply(configuration)
            let (tooLarge, _) = await fetch(engine, server.url("/p"))
            #expect(tooLarge?.kind == .tooLarge)
        }
    }

    @Test("secrets in URLs are redacted before they reach an error")
    func redactedInErrors() async throws {
        let engine = NetworkFixture.engine { $0.allowedHosts = ["images.example.org"] }
        defer { engine.shutdown() }
        let (error, _) = await fetch(engine, "https://evil.example.com/p?api_key=SECRET123&q=cats")
        #expect(error?.kind == .forbidden)
        #expect(error?.message.contains("SECRET123") == false)
        #expect(error?.message.contains("q=cats") == true)
    }

    @Test("secrets are redacted from transport errors too")
    func redactedInTransportErrors() async throws {
        let closed = try RefusingPort()
        let url = closed.url("/x?key=SECRET456")
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let (error, _) = await fetch(engine, url)
        #expect(error?.kind == .networkUnavailable)
        #expect(error?.message.contains("SECRET456") == false)
        #expect(error?.message.contains("key=REDACTED") == true)
        withExtendedLifetime(closed) {}
    }

    @Test("redaction removes every secret query value and user-info, keeping the rest")
    func redaction() {
        #expect(URLRedaction.redact("https://pixabay.com/api/?key=abc&q=dog") == "https://pixabay.com/api/?key=REDACTED&q=dog")
        #expect(URLRedaction.redact("https://x.org/?api_key=1&client_id=2&access_key=3&secret=4&token=5&page=2")
                == "https://x.org/?api_key=REDACTED&client_id=REDACTED&access_key=REDACTED&secret=REDACTED&token=REDACTED&page=2")
        #expect(URLRedaction.redact("https://user:pw@x.org/a?API_KEY=1#f") == "https://REDACTED@x.org/a?API_KEY=REDACTED#f")
        #expect(URLRedaction.redact("https://x.org/a") == "https://x.org/a")
    }

    @Test("internal addresses are classified as such, public ones are not")
    func addressClassification() {
        for address in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
                         "100.64.0.1", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::"] {
            #expect(IPAddress(address)?.isInternal == true, "\(address)")
        }
        for address in ["8.8.8.8", "151.101.1.1", "2a00:1450::1", "172.32.0.1"] {
            #expect(IPAddress(address)?.isInternal == false, "\(address)")
        }
    }
}
