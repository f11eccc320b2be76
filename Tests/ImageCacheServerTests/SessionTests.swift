import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheServer
import Testing
import TestSupport

/// A connection is a session: concurrent requests, exactly one answer each, `cancel`,
/// per-session caps, and everything cancelled when it closes (docs/protocol.md, "Sessions").
@Suite("Sessions", .timeLimit(.minutes(2)))
struct SessionTests {
    @Test("requests on one connection run concurrently: a later request is answered while an earlier one runs")
    func concurrentRequests() async throws {
        let methods = TestMethods()
        try await TestServer.with(extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":1,"method":"test.block","params":{"key":"a"}}"#)
            try await methods.wait(for: "started:a")
            let echo = try await client.call(#"{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{"key":"b"}}"#)
            #expect(echo["id"] as? Int == 2)
            #expect(echo["result"] as? String == "b")
            await client.close()
        }
    }

    @Test("cancel answers the pending request 1007 cancelled, reports true, and the request is answered only once")
    func cancelPending() async throws {
        let methods = TestMethods()
        try await TestServer.with(extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":7,"method":"test.block","params":{"key":"k"}}"#)
            try await methods.wait(for: "started:k")
            try await client.send(#"{"jsonrpc":"2.0","id":8,"method":"cancel","params":{"id":7}}"#)
            let first = try await client.readMessage()
            let second = try await client.readMessage()
            let answers = [first, second]
            let cancelled = try #require(answers.first { $0["id"] as? Int == 7 })
            #expect(cancelled.errorCode == 1007)
            #expect(cancelled.errorKind == "cancelled")
            #expect(cancelled.errorData["reason"] as? String == "cancelled")
            let ack = try #require(answers.first { $0["id"] as? Int == 8 })
            #expect(ack.resultObject?["cancelled"] as? Bool == true)
            try await methods.wait(for: "cancelled:k")
            // Nothing more for id 7: the next line is the answer to the next request.
            let next = try await client.call(#"{"jsonrpc":"2.0","id":9,"method":"hello"}"#)
            #expect(next["id"] as? Int == 9)
            await client.close()
        }
    }

    @Test("cancel of an id that is not pending answers false")
    func cancelUnknown() async throws {
        try await TestServer.with { server in
            let client = try await server.connect()
            let answer = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"id":"nope"}}"#)
            #expect(answer.resultObject?["cancelled"] as? Bool == false)
            await client.close()
        }
    }

    @Test("past max_pending_per_session a request gets 1012 busy, while cancel still works")
    func pendingCap() async throws {
        let methods = TestMethods()
        try await TestServer.with(limits: ServerLimits(maxPendingPerSession: 2), extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":1,"method":"test.block","params":{"key":"a"}}"#)
            try await methods.wait(for: "started:a")
            try await client.send(#"{"jsonrpc":"2.0","id":2,"method":"test.block","params":{"key":"b"}}"#)
            try await methods.wait(for: "started:b")
            let busy = try await client.call(#"{"jsonrpc":"2.0","id":3,"method":"test.block","params":{"key":"c"}}"#)
            #expect(busy["id"] as? Int == 3)
            #expect(busy.errorCode == 1012)
            #expect(busy.errorKind == "busy")
            try await client.send(#"{"jsonrpc":"2.0","id":4,"method":"cancel","params":{"id":1}}"#)
            let answers = [try await client.readMessage(), try await client.readMessage()]
            #expect(answers.contains { $0["id"] as? Int == 1 && $0.errorCode == 1007 })
            #expect(answers.contains { $0["id"] as? Int == 4 && $0.resultObject?["cancelled"] as? Bool == true })
            let ok = try await client.call(#"{"jsonrpc":"2.0","id":5,"method":"hello"}"#)
            #expect(ok.resultObject != nil)
            await client.close()
        }
    }

    @Test("the cap is per session: another connection is not affected")
    func capIsPerSession() async throws {
        let methods = TestMethods()
        try await TestServer.with(limits: ServerLimits(maxPendingPerSession: 1), extend: { methods.register(in: &$0) }) { server in
            let busyClient = try await server.connect()
            try await busyClient.send(#"{"jsonrpc":"2.0","id":1,"method":"test.block","params":{"key":"a"}}"#)
            try await methods.wait(for: "started:a")
            let busy = try await busyClient.call(#"{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{"key":"x"}}"#)
            #expect(busy.errorCode == 1012)
            let other = try await server.connect()
            let echo = try await other.call(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"key":"y"}}"#)
            #expect(echo["result"] as? String == "y")
            await busyClient.close()
            await other.close()
        }
    }

    @Test("a second pending request with the same id gets -32600")
    func duplicateID() async throws {
        let methods = TestMethods()
        try await TestServer.with(extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":5,"method":"test.block","params":{"key":"a"}}"#)
            try await methods.wait(for: "started:a")
            let duplicate = try await client.call(#"{"jsonrpc":"2.0","id":5,"method":"hello"}"#)
            #expect(duplicate["id"] as? Int == 5)
            #expect(duplicate.errorCode == -32600)
            await client.close()
        }
    }

    @Test("an id may be reused the moment its answer arrives")
    func idReusedAtOnce() async throws {
        let methods = TestMethods()
        try await TestServer.with(extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            // The answer is queued before its entry leaves the pending table: a client that sends
            // the same id as soon as it reads the answer must not be told it is still pending.
            for round in 0..<2000 {
                let answer = try await client.call(#"{"jsonrpc":"2.0","id":7,"method":"test.echo","params":{"key":"r\#(round)"}}"#)
                #expect(answer.errorCode == nil, "round \(round): \(answer)")
                if answer.errorCode != nil { break }
            }
            await client.close()
        }
    }

    @Test("closing the connection cancels the work its session owns")
    func closeCancelsWork() async throws {
        let methods = TestMethods()
        try await TestServer.with(extend: { methods.register(in: &$0) }) { server in
            let client = try await server.connect()
            try await client.send(#"{"jsonrpc":"2.0","id":1,"method":"test.block","params":{"key":"owned"}}"#)
            try await methods.wait(for: "started:owned")
            await client.close()
            try await methods.wait(for: "cancelled:owned")
            await server.server.waitUntilSessionCount(atMost: 0)
        }
    }

    @Test("stats reports the sessions connected now")
    func statsSessions() async throws {
        try await TestServer.with { server in
            let a = try await server.connect()
            let b = try await server.connect()
            // A round trip on b proves the server has accepted it (connect alone returns earlier).
            _ = try await b.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            let stats = try await a.call(#"{"jsonrpc":"2.0","id":1,"method":"stats"}"#)
            #expect(stats.resultObject?["sessions"] as? Int == 2)
            await b.close()
            await server.server.waitUntilSessionCount(atMost: 1)
            let again = try await a.call(#"{"jsonrpc":"2.0","id":2,"method":"stats"}"#)
            #expect(again.resultObject?["sessions"] as? Int == 1)
            await a.close()
        }
    }

    @Test("hello follows a replaced configuration (a reload), though its answer is cached")
    func helloAfterReload() async throws {
        var router = RPCRouter()
        let store = ConfigurationStore(CacheConfiguration())
        CoreMethods(configuration: store, stats: StatsRegistry()).register(in: &router)
        let server = RPCServer(router: router, limits: { ServerLimits() }, logger: TestServer.logger)
        let folder = TestServer.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let listener = try SocketBinder.bind(path: folder + "/h.sock", group: nil, logger: TestServer.logger)
        try await server.start(on: listener)
        listener.releaseLock()
        let client = try await RawClient.connect(folder + "/h.sock")
        let before = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
        #expect((before.resultObject?["providers"] as? [[String: Any]])?.first { $0["name"] as? String == "flickr" }?["configured"] as? Bool == false)
        store.replace(with: CacheConfigurationFixture.withFlickrKey())
        let after = try await client.call(#"{"jsonrpc":"2.0","id":"s","method":"hello"}"#)
        #expect(after["id"] as? String == "s")
        #expect((after.resultObject?["providers"] as? [[String: Any]])?.first { $0["name"] as? String == "flickr" }?["configured"] as? Bool == true)
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
        listener.removeSocketFile()
    }

    @Test("the limits and thumbnail size a store derives follow a replaced configuration")
    func derivedValuesFollowReplace() {
        let store = ConfigurationStore(CacheConfiguration())
        #expect(store.limits == ServerLimits(maxRequestBytes: CacheConfiguration().daemon.maxRequestBytes,
                                             maxPendingPerSession: CacheConfiguration().daemon.maxPendingPerSession))
        var changed = CacheConfiguration()
        changed.daemon.maxRequestBytes = 4096
        changed.daemon.maxPendingPerSession = 3
        changed.cache.thumbnailSize = 123
        store.replace(with: changed)
        #expect(store.limits == ServerLimits(maxRequestBytes: 4096, maxPendingPerSession: 3))
        #expect(store.thumbnailSize == 123)
        #expect(store.generation == 1)
    }

    @Test("hello reports name, version, protocol 1 and which providers have a key")
    func hello() async throws {
        var configuration = CacheConfigurationFixture.withFlickrKey()
        configuration.pixabay.apiKey = ""
        try await TestServer.with(configuration: configuration) { server in
            let client = try await server.connect()
            let hello = try await client.call(#"{"jsonrpc":"2.0","id":1,"method":"hello"}"#)
            let result = try #require(hello.resultObject)
            #expect(result["name"] as? String == "imagecached")
            #expect((result["version"] as? String)?.split(separator: ".").count == 3)
            #expect(result["protocol"] as? Int == 1)
            let providers = try #require(result["providers"] as? [[String: Any]])
            let configured = Dictionary(uniqueKeysWithValues: providers.map { ($0["name"] as! String, $0["configured"] as! Bool) })
            #expect(configured == ["unsplash": false, "flickr": true, "pixabay": false])
            // The key itself never crosses the socket.
            #expect(!String(decoding: try JSONSerialization.data(withJSONObject: hello), as: UTF8.self).contains("secret-flickr-key"))
            await client.close()
        }
    }
}
