import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Hostile upstreams through the real socket: image hosts and providers on loopback
/// that send exactly the hostile values, and a daemon that stays up and answers the right kind.
@Suite("Hostile upstreams on the socket", .timeLimit(.minutes(5)))
struct HostileUpstreamTests {
    static let hostile = ["1e16", "1e300", "inf", "nan", "-1", "9223372036854775807",
                          "Fri, 31 Dec 9999 23:59:59 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "garbage"]

    private func expectSaneRetryAfter(_ answer: [String: Any], _ what: String) {
        guard let after = answer.errorData["retryAfter"] else { return }
        let seconds = after as? Double ?? Double(after as? Int ?? -1)
        #expect(seconds >= 0 && seconds <= OutsideSeconds.cap, "\(what): \(answer)")
    }

    @Test("429 and 503 image answers with hostile Retry-After: 1004 and 1003, and the daemon stays up")
    func imageHostRetryAfter() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(width: 300, height: 200)
            var ids: [Int: (status: Int, value: String)] = [:]
            for (index, value) in Self.hostile.enumerated() {
                for status in [429, 503] {
                    let id = index * 2 + (status == 429 ? 1 : 2)
                    ids[id] = (status, value)
                    f.images.serve("/h\(id).jpg", body: body, faults: Array(repeating: .status(status, retryAfter: value), count: 6))
                    try await client.send(rpcLine(id, "thumbnail.show", ["slot": id, "url": f.images.url("/h\(id).jpg")]))
                }
            }
            let answers = try await client.answers(for: Set(ids.keys))
            for (id, sent) in ids {
                let answer = try #require(answers[id])
                let what = "HTTP \(sent.status) Retry-After: \(sent.value)"
                if sent.status == 429 {
                    #expect(answer.errorCode == 1004 && answer.errorKind == "rate_limited", "\(what): \(answer)")
                } else {
                    #expect(answer.errorCode == 1003 && answer.errorKind == "upstream_error", "\(what): \(answer)")
                    #expect(answer.errorData["status"] as? Int == 503, "\(what): \(answer)")
                }
                expectSaneRetryAfter(answer, what)
            }
            // The absurd ones are clamped to the cap, not dropped.
            let capped = try #require(answers[ids.first { $0.value == (429, "1e300") }!.key])
            #expect(capped.errorData["retryAfter"] as? Double == OutsideSeconds.cap)
            let unavailable = try #require(answers[ids.first { $0.value == (503, "inf") }!.key])
            #expect(unavailable.errorData["retryAfter"] as? Double == OutsideSeconds.cap)
            // Still serving: an ordinary thumbnail after all of them.
            let url = f.serve("/fine.jpg")
            try await client.send(rpcLine(1000, "thumbnail.show", ["slot": 1000, "url": url]))
            let fine = try await client.answer(1000).answer
            #expect(fine.resultObject != nil, "\(fine)")
            await client.close()
        }
    }

    @Test("an image host's 204 followed by a body: that thumbnail is 1003, the host's next thumbnail arrives")
    func bodylessAnswerWithBody() async throws {
        try await ThumbnailFixture.with { f in
            let host = try ScriptedHTTPServer(script: [
                .raw("HTTP/1.1 204 No Content\r\nContent-Length: 11\r\n\r\n", leftover: "hello there"),
                .ok(SyntheticImages.jpeg(width: 300, height: 200)),
            ])
            defer { host.stop() }
            let client = try await f.connect()
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 1, "url": host.url("/empty.jpg")]))
            let empty = try await client.answer(1).answer
            #expect(empty.errorCode == 1003 && empty.errorKind == "upstream_error", "\(empty)")
            #expect(empty.errorData["status"] as? Int == 204, "\(empty)")
            try await client.send(rpcLine(2, "thumbnail.show", ["slot": 2, "url": host.url("/photo.jpg")]))
            let photo = try await client.answer(2).answer
            #expect(photo.resultObject != nil, "\(photo)")
            #expect(host.requests == 2)
            #expect(host.connections == 2)
            await client.close()
        }
    }

    @Test("an image host answering with no HTTP at all (HTTP/0.9): 1003 with the reason, never 1010")
    func notHTTPAnswer() async throws {
        try await ThumbnailFixture.with { f in
            let host = try ScriptedHTTPServer(script: [.raw("JFIF garbage, no status line\r\n", close: true)])
            defer { host.stop() }
            let client = try await f.connect()
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 1, "url": host.url("/x.jpg")]))
            let answer = try await client.answer(1).answer
            #expect(answer.errorCode == 1003 && answer.errorKind == "upstream_error", "\(answer)")
            #expect(((answer["error"] as? [String: Any])?["message"] as? String)?.contains("HTTP/0.9") == true, "\(answer)")
            await client.close()
        }
    }

    @Test("a provider's 429 with hostile Retry-After is 1004 with a sane retryAfter", arguments: hostile)
    func providerRetryAfter(value: String) async throws {
        try await SearchFixture.with { fixture in
            fixture.api.setFault(.withHeaders(429, body: "slow down", headers: ["Retry-After": value]), for: "unsplash")
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let answer = try await client.request(1, "search", ["query": "forest", "provider": "unsplash"])
                #expect(answer.errorCode == 1004, "\(value): \(answer)")
                expectSaneRetryAfter(answer, value)
                let status = try await client.request(2, "stats")
                #expect(status.resultObject != nil)
                await client.close()
            }
        }
    }

    @Test("X-RateLimit-Remaining 0 with an absurd reset: the next search is 1004 with retryAfter at the cap",
          arguments: ["1e300", "inf", "9223372036854775807"])
    func providerReset(reset: String) async throws {
        try await SearchFixture.with { fixture in
            fixture.api.setFault(.withHeaders(200, body: #"{"total":0,"totalHits":0,"hits":[]}"#,
                                              headers: ["X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0",
                                                        "X-RateLimit-Reset": reset]), for: "pixabay")
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                _ = try await client.request(1, "search", ["query": "forest", "provider": "pixabay"])
                let again = try await client.request(2, "search", ["query": "meadow", "provider": "pixabay"])
                #expect(again.errorCode == 1004, "\(again)")
                let after = try #require(again.errorData["retryAfter"] as? Double)
                #expect(after > OutsideSeconds.cap - 60 && after <= OutsideSeconds.cap)
                await client.close()
            }
        }
    }

    @Test("a provider's 503 with Retry-After is 1003 with status and retryAfter, not 1004")
    func provider503() async throws {
        try await SearchFixture.with { fixture in
            fixture.api.setFault(.withHeaders(503, body: "maintenance", headers: ["Retry-After": "30"]), for: "unsplash")
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let answer = try await client.request(1, "search", ["query": "forest", "provider": "unsplash"])
                #expect(answer.errorCode == 1003, "\(answer)")
                #expect(answer.errorData["status"] as? Int == 503)
                #expect(answer.errorData["retryAfter"] as? Double == 30)
                await client.close()
            }
        }
    }

    @Test("a provider that redirects to another host: the key goes neither in a header nor in the URL")
    func providerRedirectKeepsKey() async throws {
        try await SearchFixture.with { fixture in
            let elsewhere = try await ImageServer.start()
            elsewhere.serve("/collect", body: Array("{}".utf8), contentType: "application/json")
            let key = ProviderAPISimulator.defaultKeys["unsplash"]!
            fixture.api.setFault(.withHeaders(302, body: "moved", headers: ["Location": elsewhere.url("/collect?client_id=\(key)&page=1")]),
                                 for: "unsplash")
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                _ = try await client.request(1, "search", ["query": "forest", "provider": "unsplash"])
                let got = try #require(elsewhere.counters.lastRequest["/collect"])
                #expect(got.header("Authorization") == nil, "\(got.headers)")
                #expect(!got.uri.contains(key), "\(got.uri)")
                #expect(got.uri.contains("page=1"), "\(got.uri)")
                await client.close()
            }
            await elsewhere.shutdown()
        }
    }
}
