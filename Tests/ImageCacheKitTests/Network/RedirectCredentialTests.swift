import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Credentials never cross to another origin on a redirect (docs/protocol.md, "Redirects and credentials"):
/// two loopback servers on different ports are two origins, as for browsers and curl.
@Suite("Network: redirects keep credentials on their origin", .timeLimit(.minutes(3)))
struct RedirectCredentialTests {
    static let key = "s3cr3t-client-key-0123456789"

    /// A GET carrying the key in `Authorization` and in `api_key`, as Unsplash and Flickr send it.
    private func request(_ url: String) -> TransferRequest {
        TransferRequest(url: url + "?api_key=\(Self.key)&q=cats",
                        headers: [("Authorization", "Client-ID \(Self.key)"), ("Accept-Version", "v1")])
    }

    @Test("a redirect to another port gets neither the Authorization header nor the key in its query")
    func crossOrigin() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let photo = try NetworkFixture.photo()
        try await withTwoServers { first, second in
            second.serve("/landing", body: photo)
            // A hostile first host copies the key into its Location, beside a harmless parameter.
            first.serve("/start", body: [], faults: [.redirect(to: second.url("/landing?w=100&api_key=\(Self.key)&sig=abc"))])
            let result = try await withTimeout(seconds: 60) { try await engine.start(request(first.url("/start"))).result() }
            #expect(result.body == .memory(photo))
            let got = try #require(second.counters.lastRequest["/landing"])
            #expect(got.header("Authorization") == nil, "\(got.headers)")
            #expect(!got.uri.contains(Self.key), "\(got.uri)")
            #expect(!got.headers.contains { $0.1.contains(Self.key) }, "\(got.headers)")
            #expect(got.uri.contains("w=100") && got.uri.contains("sig=abc"), "\(got.uri)")
            #expect(got.header("Accept-Version") == "v1")
            // The first host got them: it is the one they were meant for.
            let sent = try #require(first.counters.lastRequest["/start"])
            #expect(sent.header("Authorization") == "Client-ID \(Self.key)")
        }
    }

    @Test("a redirect on the same origin keeps the credentials")
    func sameOrigin() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let photo = try NetworkFixture.photo()
        try await NetworkFixture.withServer { server in
            server.serve("/there", body: photo)
            server.serve("/here", body: [], faults: [.redirect(to: "/there")])
            _ = try await withTimeout(seconds: 60) { try await engine.start(request(server.url("/here"))).result() }
            let got = try #require(server.counters.lastRequest["/there"])
            #expect(got.header("Authorization") == "Client-ID \(Self.key)")
        }
    }

    @Test("once a redirect left the origin, coming back does not restore the credentials")
    func noReturn() async throws {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let photo = try NetworkFixture.photo()
        try await withTwoServers { first, second in
            first.serve("/back", body: photo)
            second.serve("/bounce", body: [], faults: [.redirect(to: first.url("/back"))])
            first.serve("/go", body: [], faults: [.redirect(to: second.url("/bounce"))])
            _ = try await withTimeout(seconds: 60) { try await engine.start(request(first.url("/go"))).result() }
            #expect(second.counters.lastRequest["/bounce"]?.header("Authorization") == nil)
            #expect(first.counters.lastRequest["/back"]?.header("Authorization") == nil)
        }
    }

    /// Two image servers (two origins: same host, different ports), both shut down afterwards.
    private func withTwoServers(_ body: (ImageServer, ImageServer) async throws -> Void) async throws {
        let second = try await ImageServer.start()
        do {
            try await NetworkFixture.withServer { first in try await body(first, second) }
        } catch {
            await second.shutdown()
            throw error
        }
        await second.shutdown()
    }

    @Test("the secrets a request carries, and a URL stripped of them")
    func redaction() {
        let secrets = URLRedaction.secrets(url: "https://a/x?api_key=KEY123&q=1", headers: [("Authorization", "Client-ID abcd1234")])
        #expect(Set(secrets) == ["KEY123", "Client-ID", "abcd1234"])
        #expect(URLRedaction.removingParameters(carrying: ["KEY123"], from: "https://b/y?a=1&key=KEY123&b=2#f") == "https://b/y?a=1&b=2#f")
        #expect(URLRedaction.removingParameters(carrying: ["KEY123"], from: "https://b/y?k=KEY%3123") == "https://b/y")
        #expect(URLRedaction.removingParameters(carrying: ["KEY123"], from: "https://b/y?sig=zz") == "https://b/y?sig=zz")
    }
}
