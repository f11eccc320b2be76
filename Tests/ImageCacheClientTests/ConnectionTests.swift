import Foundation
import ImageCacheClient
import Testing
import TestSupport

/// Canned answers in the contract's shapes, as a daemon would send them.
enum Canned {
    static let hello = #"{"name":"imagecached","version":"0.1.0","protocol":1,"providers":[{"name":"unsplash","configured":true}]}"#
    static let stats = #"{"memory":{"entries":1,"bytes":2,"limit":3,"hits":4,"misses":5},"disk":{"entries":1,"bytes":2,"limit":3,"hits":4,"misses":5},"network":{"inFlight":0,"queued":0,"requests":1,"bytesReceived":10,"bytesDiscarded":0},"providers":{},"sessions":1,"uptimeSeconds":2}"#
    static let photo = #"{"id":"unsplash:a","provider":"unsplash","width":400,"height":300,"thumbURL":"https://x.test/t","fullURL":"https://x.test/f","author":{"name":"A","profileURL":null},"likes":null,"description":null,"pageURL":null}"#
    static let search = #"{"query":"cats","provider":"unsplash","page":1,"perPage":10,"total":1,"totalPages":1,"hasMore":false,"photos":[\#(photo)],"fromCache":false,"stale":false}"#
    static let thumbnail = #"{"slot":3,"view":"main","photo":"unsplash:a","path":"/c/a.jpg","width":256,"height":192,"bytes":900,"mime":"image/jpeg","source":"network"}"#
    static let job = #"{"job":"j1","photo":"unsplash:a","url":null,"variant":"full","state":"running","path":null,"received":5,"total":null,"width":null,"height":null,"error":null,"createdAt":"2026-11-21T14:00:00Z","endedAt":null}"#
}

/// Connects a client to a fresh scripted peer, runs `body` within a time bound, and tears
/// both down.
func withPeer(
    seconds: Double = 30,
    _ body: @escaping @Sendable (ScriptedPeer, ImageCacheConnection, inout AsyncStream<ScriptedPeer.Event>.Iterator) async throws -> Void
) async throws {
    let peer = try ScriptedPeer()
    defer { peer.stop() }
    try await withTimeout(seconds: seconds) {
        let connection = try await ImageCacheConnection.connect(to: peer.socketPath)
        var events = peer.events.makeAsyncIterator()
        // Wait until the peer has accepted, so what it sends first reaches this client.
        guard case .connected? = await events.next() else { throw PeerError.ended }
        do {
            try await body(peer, connection, &events)
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }
}

@Suite("ImageCacheConnection against a scripted peer", .timeLimit(.minutes(2)))
struct ConnectionTests {
    @Test("a call sends one JSON-RPC 2.0 line and returns the typed result")
    func typedCall() async throws {
        try await withPeer { peer, connection, events in
            async let hello = connection.hello()
            let request = try await events.nextMessage()
            #expect(request["jsonrpc"] == .string("2.0"))
            #expect(request["method"] == .string("hello"))
            #expect(request["params"] == .object([:]))
            #expect(request["id"] == .int(1))
            peer.answer(request["id"]!, result: Canned.hello)
            let result = try await hello
            #expect(result.protocolVersion == 1)
            #expect(result.providers == [.init(name: "unsplash", configured: true)])
        }
    }

    @Test("request ids are integers that increase and never repeat")
    func increasingIDs() async throws {
        try await withPeer { peer, connection, events in
            var seen: [Int] = []
            for _ in 0..<3 {
                async let stats = connection.stats()
                let request = try await events.nextMessage()
                guard case .int(let id)? = request["id"] else { Issue.record("id is not an integer"); return }
                seen.append(id)
                peer.answer(request["id"]!, result: Canned.stats)
                _ = try await stats
            }
            #expect(seen == [1, 2, 3])
        }
    }

    @Test("concurrent calls each get their own answer when the daemon answers out of order")
    func outOfOrder() async throws {
        try await withPeer { peer, connection, events in
            async let first = connection.photo("unsplash:first")
            async let second = connection.photo("unsplash:second")
            async let third = connection.photo("unsplash:third")
            var requests: [String: JSONValue] = [:]
            for _ in 0..<3 {
                let request = try await events.nextMessage()
                let photo = try #require(request["params"]?.objectValue?["photo"]?.stringValue)
                requests[photo] = request["id"]
            }
            for name in ["unsplash:third", "unsplash:first", "unsplash:second"] {
                peer.answer(requests[name]!, result: Canned.photo.replacingOccurrences(of: "unsplash:a", with: name))
            }
            let results = try await [first.id, second.id, third.id]
            #expect(results == ["unsplash:first", "unsplash:second", "unsplash:third"])
        }
    }

    @Test("notifications interleaved with answers reach a subscriber, in order")
    func interleavedNotifications() async throws {
        try await withPeer { peer, connection, events in
            let notifications = connection.notifications()
            async let show = connection.showThumbnail(ThumbnailShowParams(slot: 3, image: .photo("unsplash:a"), size: 256))
            let request = try await events.nextMessage()
            peer.notify("thumbnail.dimensions", #"{"slot":3,"view":"main","photo":"unsplash:a","width":400,"height":300}"#)
            peer.notify("thumbnail.progress", #"{"slot":3,"view":"main","photo":"unsplash:a","received":100,"total":900}"#)
            peer.answer(request["id"]!, result: Canned.thumbnail)
            peer.notify("thumbnail.progress", #"{"slot":3,"view":"main","photo":"unsplash:a","received":900,"total":900}"#)
            let result = try await show
            #expect(result.path == "/c/a.jpg" && result.source == .network)
            var received: [ServerNotification] = []
            for await notification in notifications {
                received.append(notification)
                if received.count == 3 { break }
            }
            #expect(received == [
                .thumbnailDimensions(ThumbnailDimensions(slot: 3, photo: "unsplash:a", width: 400, height: 300)),
                .thumbnailProgress(ThumbnailProgress(slot: 3, photo: "unsplash:a", received: 100, total: 900)),
                .thumbnailProgress(ThumbnailProgress(slot: 3, photo: "unsplash:a", received: 900, total: 900)),
            ])
        }
    }

    @Test("every subscriber sees every notification")
    func severalSubscribers() async throws {
        try await withPeer { peer, connection, events in
            let a = connection.notifications()
            let b = connection.notifications()
            peer.notify("download.finished", #"{"job":"j1","path":"/d/a.jpg","bytes":10,"width":4,"height":3}"#)
            let expected = ServerNotification.downloadFinished(DownloadFinished(job: "j1", path: "/d/a.jpg", bytes: 10, width: 4, height: 3))
            var ia = a.makeAsyncIterator()
            var ib = b.makeAsyncIterator()
            #expect(await ia.next() == expected)
            #expect(await ib.next() == expected)
        }
    }

    @Test("a notification with a name this client does not know arrives as .other")
    func unknownNotification() async throws {
        try await withPeer { peer, connection, events in
            let stream = connection.notifications()
            peer.notify("search.progress", #"{"x":1}"#)
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == .other(RPCNotification(method: "search.progress", params: .object(["x": .int(1)]))))
        }
    }

    @Test("an error answer is thrown as the daemon's RPCError, data included")
    func errorAnswer() async throws {
        try await withPeer { peer, connection, events in
            async let search = connection.search("ab")
            let request = try await events.nextMessage()
            peer.answer(request["id"]!, code: 1001, kind: "query_too_short", message: "query must have at least 3 characters")
            do {
                _ = try await search
                Issue.record("the call succeeded")
            } catch let error as RPCError {
                #expect(error.kind == .queryTooShort)
                #expect(error.code == 1001)
                #expect(error.message == "query must have at least 3 characters")
            }
        }
    }

    @Test("a rate-limit error keeps its retryAfter")
    func errorDetails() async throws {
        try await withPeer { peer, connection, events in
            let search = Task { try await connection.search("cats") }
            let request = try await events.nextMessage()
            peer.answer(request["id"]!, code: 1004, kind: "rate_limited", message: "quota", extra: #","retryAfter":30"#)
            await #expect(throws: RPCError(.rateLimited, "quota", retryAfter: 30)) { _ = try await search.value }
        }
    }

    @Test("cancelling a call's task sends cancel {id}, throws CancellationError, and ignores the late 1007")
    func cancellation() async throws {
        try await withPeer { peer, connection, events in
            let task = Task { try await connection.search("cats") }
            let request = try await events.nextMessage()
            #expect(request["method"] == .string("search"))
            task.cancel()
            let cancel = try await events.nextMessage()
            #expect(cancel["method"] == .string("cancel"))
            #expect(cancel["params"] == .object(["id": request["id"]!]))
            #expect(cancel["id"] != request["id"])
            await #expect(throws: CancellationError.self) { _ = try await task.value }

            // The daemon's answers to both arrive later and are dropped; the session goes on.
            peer.answer(request["id"]!, code: 1007, kind: "cancelled", message: "cancelled", extra: #","reason":"cancelled""#)
            peer.answer(cancel["id"]!, result: #"{"cancelled":true}"#)
            async let hello = connection.hello()
            let next = try await events.nextMessage()
            #expect(next["method"] == .string("hello"))
            peer.answer(next["id"]!, result: Canned.hello)
            #expect(try await hello.name == "imagecached")
        }
    }

    @Test("a call whose task is cancelled before it is sent never reaches the daemon")
    func cancelledBeforeSending() async throws {
        try await withPeer { peer, connection, events in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await connection.stats()
            }
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            async let hello = connection.hello()
            let next = try await events.nextMessage()
            #expect(next["method"] == .string("hello"))
            peer.answer(next["id"]!, result: Canned.hello)
            _ = try await hello
        }
    }

    @Test("a daemon that closes mid-call fails every pending call, and ends the notification streams")
    func peerClosesMidCall() async throws {
        try await withPeer { peer, connection, events in
            let notifications = connection.notifications()
            let first = Task { _ = try await connection.stats() }
            let second = Task { _ = try await connection.hello() }
            _ = try await events.nextMessage()
            _ = try await events.nextMessage()
            peer.dropConnection()
            for result in [await first.result, await second.result] {
                guard case .failure(let error) = result, case .connectionClosed(let path, _)? = error as? ImageCacheClientError else {
                    Issue.record("expected connectionClosed, got \(result)")
                    continue
                }
                #expect(path == peer.socketPath)
            }
            for await _ in notifications {}
            #expect(connection.isClosed)
        }
    }

    @Test("a call made after the connection closed fails at once")
    func callAfterClose() async throws {
        try await withPeer { peer, connection, events in
            peer.dropConnection()
            #expect(await events.nextIsDisconnect())
            for await _ in connection.notifications() {}
            await #expect(throws: ImageCacheClientError.self) { _ = try await connection.stats() }
        }
    }

    @Test("close() fails pending calls with closedByClient")
    func clientClose() async throws {
        try await withPeer { peer, connection, events in
            let stats = Task { try await connection.stats() }
            _ = try await events.nextMessage()
            await connection.close()
            await #expect(throws: ImageCacheClientError.closedByClient) { _ = try await stats.value }
            #expect(await events.nextIsDisconnect())
        }
    }

    @Test("an answer the client cannot read is an invalidResponse error, and the session goes on")
    func unreadableAnswer() async throws {
        try await withPeer { peer, connection, events in
            let hello = Task { try await connection.hello() }
            let request = try await events.nextMessage()
            peer.answer(request["id"]!, result: #"{"name":"imagecached"}"#)
            await #expect {
                _ = try await hello.value
            } throws: { error in
                guard case .invalidResponse(let method, _)? = error as? ImageCacheClientError else { return false }
                return method == "hello"
            }
            async let stats = connection.stats()
            let next = try await events.nextMessage()
            peer.answer(next["id"]!, result: Canned.stats)
            #expect(try await stats.sessions == 1)
        }
    }

    @Test("lines that are not JSON, and answers to ids never sent, are dropped")
    func strayLines() async throws {
        try await withPeer { peer, connection, events in
            async let hello = connection.hello()
            let request = try await events.nextMessage()
            peer.send("this is not json")
            peer.answer(.int(999), result: Canned.hello)
            peer.answer(.string("x"), result: Canned.hello)
            peer.answer(request["id"]!, result: Canned.hello)
            #expect(try await hello.version == "0.1.0")
        }
    }

    @Test("the raw call sends any method and returns its raw result")
    func rawCall() async throws {
        try await withPeer { peer, connection, events in
            async let raw = connection.call(method: "future.method", params: .object(["a": .int(1)]))
            let request = try await events.nextMessage()
            #expect(request["method"] == .string("future.method"))
            #expect(request["params"] == .object(["a": .int(1)]))
            peer.answer(request["id"]!, result: #"{"ok":true}"#)
            #expect(try await raw == .object(["ok": .bool(true)]))
        }
    }

    @Test("a hundred concurrent calls answered in reverse order each get their own answer")
    func manyConcurrentCalls() async throws {
        try await withPeer { peer, connection, events in
            let calls = (0..<100).map { n in Task { try await connection.photo("unsplash:p\(n)").id } }
            var ids: [(JSONValue, String)] = []
            for _ in 0..<100 {
                let request = try await events.nextMessage()
                ids.append((request["id"]!, try #require(request["params"]?.objectValue?["photo"]?.stringValue)))
            }
            for (id, photo) in ids.reversed() {
                peer.answer(id, result: Canned.photo.replacingOccurrences(of: "unsplash:a", with: photo))
            }
            for (n, call) in calls.enumerated() {
                #expect(try await call.value == "unsplash:p\(n)")
            }
        }
    }

    @Test("a known notification with a malformed shape is passed on raw, not lost")
    func malformedNotification() async throws {
        try await withPeer { peer, connection, events in
            let stream = connection.notifications()
            peer.notify("download.finished", #"{"job":7}"#)
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == .other(RPCNotification(method: "download.finished", params: .object(["job": .int(7)]))))
        }
    }

    @Test("a last answer without its newline is still read when the daemon closes")
    func answerWithoutNewline() async throws {
        try await withPeer { peer, connection, events in
            let hello = Task { try await connection.hello() }
            let request = try await events.nextMessage()
            guard case .int(let id)? = request["id"] else { Issue.record("id is not an integer"); return }
            peer.sendRaw(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(Canned.hello)}"#)
            peer.dropConnection()
            #expect(try await hello.value.name == "imagecached")
        }
    }

    @Test("a connection released without close() still closes its socket")
    func releasedConnectionCloses() async throws {
        let peer = try ScriptedPeer()
        defer { peer.stop() }
        try await withTimeout(seconds: 30) {
            var events = peer.events.makeAsyncIterator()
            var connection: ImageCacheConnection? = try await ImageCacheConnection.connect(to: peer.socketPath)
            guard case .connected? = await events.next() else { throw PeerError.ended }
            #expect(connection?.isClosed == false)
            connection = nil
            #expect(await events.nextIsDisconnect())
        }
    }
}
