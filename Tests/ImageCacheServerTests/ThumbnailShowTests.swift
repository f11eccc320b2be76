import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// `thumbnail.show` and `thumbnail.recycle` through a real daemon's socket against a real
/// image server: what is fetched (the server's counts), what is delivered, and what a recycle
/// stops.
@Suite("Thumbnails through the daemon socket", .timeLimit(.minutes(5)))
struct ThumbnailShowTests {
    @Test("only the slots shown fetch: the server sees exactly their images")
    func onlyVisibleSlotsFetch() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let a = f.serve("/a.jpg", seed: 1)
            let b = f.serve("/b.jpg", seed: 2)
            f.serve("/c.jpg", seed: 3)

            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": a]))
            try await client.send(rpcLine(2, "thumbnail.show", ["slot": 1, "url": b]))
            let answers = try await client.answers(for: [1, 2])
            for (id, answer) in answers {
                let result = try #require(answer.resultObject, "answer \(id): \(answer)")
                #expect(result["source"] as? String == "network")
                #expect(result["slot"] as? Int == id - 1)
                #expect(result["view"] as? String == "main")
                #expect(result["photo"] is NSNull)
            }
            let counters = f.images.counters
            #expect(counters.requests("/a.jpg") == 1)
            #expect(counters.requests("/b.jpg") == 1)
            #expect(counters.requests("/c.jpg") == 0)
            #expect(counters.totalRequests == 2)

            await client.close()
        }
    }

    @Test("a delivered thumbnail is a complete file of the size asked, and a second show is a memory hit")
    func deliveryAndHit() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let url = f.serve("/wide.jpg", width: 1200, height: 800)

            let result = try #require(try await client.ask(1, "thumbnail.show", ["slot": 3, "url": url, "size": 300]).resultObject)
            #expect(result["width"] as? Int == 300)
            #expect(result["height"] as? Int == 200)
            #expect(result["mime"] as? String == "image/jpeg")
            let path = try #require(result["path"] as? String)
            #expect(path.hasPrefix(f.folder))
            let file = try #require(FileManager.default.contents(atPath: path))
            #expect(result["bytes"] as? Int == file.count)
            #expect(result["data"] == nil)

            let again = try #require(try await client.ask(2, "thumbnail.show", ["slot": 4, "url": url, "size": 300]).resultObject)
            #expect(again["source"] as? String == "memory")
            #expect(again["path"] as? String == path)
            #expect(f.images.counters.requests("/wide.jpg") == 1)

            await client.close()
        }
    }

    @Test("inline: true carries the file's bytes as base64")
    func inlineData() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let url = f.serve("/inline.jpg", width: 400, height: 300)

            let result = try #require(try await client.ask(1, "thumbnail.show", ["slot": 0, "url": url, "inline": true]).resultObject)
            let encoded = try #require(result["data"] as? String)
            let data = try #require(Data(base64Encoded: encoded))
            let path = try #require(result["path"] as? String)
            #expect(data == FileManager.default.contents(atPath: path))
            #expect(result["bytes"] as? Int == data.count)

            // A memory hit carries the bytes too.
            let hit = try #require(try await client.ask(2, "thumbnail.show", ["slot": 1, "url": url, "inline": true]).resultObject)
            #expect(hit["source"] as? String == "memory")
            #expect(hit["data"] as? String == encoded)
            // The next one copies the text the memory tier now keeps with the entry.
            let again = try #require(try await client.ask(3, "thumbnail.show", ["slot": 2, "url": url, "inline": true]).resultObject)
            #expect(again["source"] as? String == "memory")
            #expect(again["data"] as? String == encoded)

            await client.close()
        }
    }

    @Test("size defaults to the configuration's thumbnail_size")
    func defaultSize() async throws {
        try await ThumbnailFixture.with(configure: { $0.cache.thumbnailSize = 100 }) { f in
            let client = try await f.connect()
            let url = f.serve("/default.jpg", width: 800, height: 400)
            let result = try #require(try await client.ask(1, "thumbnail.show", ["slot": 0, "url": url]).resultObject)
            #expect(result["width"] as? Int == 100)
            #expect(result["height"] as? Int == 50)
            await client.close()
        }
    }

    @Test("a photo id answers with the photo, and an unknown one is 1006")
    func photoIDs() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let ids = try await f.photoIDs(client: client, id: 1, count: 3)
            let photo = try #require(ids.first)

            let result = try #require(try await client.ask(2, "thumbnail.show", ["slot": 0, "photo": photo, "size": 64]).resultObject)
            #expect(result["photo"] as? String == photo)
            let width = try #require(result["width"] as? Int)
            #expect(width >= 64 && width < 128)

            let unknown = try await client.ask(3, "thumbnail.show", ["slot": 1, "photo": "unsplash:never-returned"])
            #expect(unknown.errorCode == 1006)
            #expect(unknown.errorKind == "not_found")
            await client.close()
        }
    }

    @Test("params are checked: a negative slot or both photo and url are -32602")
    func invalidParams() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            #expect(try await client.ask(1, "thumbnail.show", ["slot": -1, "url": "http://127.0.0.1/x.jpg"]).errorCode == -32602)
            #expect(try await client.ask(2, "thumbnail.show", ["slot": 0, "url": "http://127.0.0.1/x.jpg", "photo": "a:b"]).errorCode == -32602)
            #expect(try await client.ask(3, "thumbnail.recycle", ["slot": -2]).errorCode == -32602)
            #expect(try await client.ask(4, "thumbnail.show", ["slot": 0, "url": "http://127.0.0.1/x.jpg", "size": 0]).errorCode == -32602)
            await client.close()
        }
    }

    @Test("recycling a loading slot answers 1007 recycled, stops its transfer, and the server sees the abort")
    func recycleAbortsTransfer() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(approximateBytes: 400_000)
            f.images.serve("/slow.jpg", body: body, faults: [.stall(afterBytes: 20_000)])

            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 5, "url": f.images.url("/slow.jpg")]))
            try await f.waitForServer { $0.requests("/slow.jpg") == 1 }
            try await client.send(rpcLine(2, "thumbnail.recycle", ["slot": 5]))
            let answers = try await client.answers(for: [1, 2])
            #expect(answers[1]?.errorCode == 1007)
            #expect(answers[1]?.errorReason == "recycled")
            #expect(answers[2]?.resultObject?["cancelled"] as? Bool == true)
            try await f.waitForServer { $0.aborted("/slow.jpg") == 1 }
            #expect(f.images.counters.completed("/slow.jpg") == 0)

            // Nothing is pending on the slot any more.
            #expect(try await client.ask(3, "thumbnail.recycle", ["slot": 5]).resultObject?["cancelled"] as? Bool == false)
            await client.close()
        }
    }

    @Test("showing a loading slot again recycles the earlier request")
    func reshowRecycles() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let held = f.serve("/held.jpg", faults: [.held])
            let other = f.serve("/other.jpg", seed: 9)

            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 2, "url": held]))
            try await f.waitForServer { $0.requests("/held.jpg") == 1 }
            try await client.send(rpcLine(2, "thumbnail.show", ["slot": 2, "url": other]))
            let answers = try await client.answers(for: [1, 2])
            #expect(answers[1]?.errorCode == 1007)
            #expect(answers[1]?.errorReason == "recycled")
            #expect(answers[2]?.resultObject?["source"] as? String == "network")
            try await f.waitForServer { $0.aborted("/held.jpg") == 1 }
            f.images.release("/held.jpg")
            await client.close()
        }
    }

    @Test("slots of different views are apart: recycling main#1 leaves side#1 loading")
    func viewsAreApart() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let held = f.serve("/v.jpg", faults: [.held])
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 1, "url": held, "view": "side"]))
            try await f.waitForServer { $0.requests("/v.jpg") == 1 }
            #expect(try await client.ask(2, "thumbnail.recycle", ["slot": 1]).resultObject?["cancelled"] as? Bool == false)
            f.images.release("/v.jpg")
            let (answer, _) = try await client.answer(1)
            #expect(answer.resultObject?["view"] as? String == "side")
            await client.close()
        }
    }

    @Test("two sessions showing one image share one transfer")
    func coalescingAcrossSessions() async throws {
        try await ThumbnailFixture.with { f in
            let one = try await f.connect()
            let two = try await f.connect()
            let url = f.serve("/shared.jpg", faults: [.held])

            try await one.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": url]))
            try await f.waitForServer { $0.requests("/shared.jpg") == 1 }
            try await two.send(rpcLine(1, "thumbnail.show", ["slot": 7, "url": url]))
            try await f.waitForDemands(2)
            f.images.release("/shared.jpg")
            let first = try await one.answer(1).answer.resultObject
            let second = try await two.answer(1).answer.resultObject
            #expect(first?["source"] as? String == "network")
            #expect(second?["source"] as? String == "network")
            let firstPath = try #require(first?["path"] as? String)
            #expect(second?["path"] as? String == firstPath)
            #expect(second?["slot"] as? Int == 7)
            #expect(f.images.counters.requests("/shared.jpg") == 1)
            await one.close()
            await two.close()
        }
    }

    @Test("a recycle while another session wants the image does not stop its transfer")
    func recycleKeepsSharedTransfer() async throws {
        try await ThumbnailFixture.with { f in
            let one = try await f.connect()
            let two = try await f.connect()
            let url = f.serve("/kept.jpg", faults: [.held])
            try await one.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": url]))
            try await two.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": url]))
            try await f.waitForServer { $0.requests("/kept.jpg") == 1 }
            try await f.waitForDemands(2)
            try await one.send(rpcLine(2, "thumbnail.recycle", ["slot": 0]))
            let recycled = try await one.answers(for: [1, 2])
            #expect(recycled[1]?.errorReason == "recycled")
            f.images.release("/kept.jpg")
            #expect(try await two.answer(1).answer.resultObject?["source"] as? String == "network")
            #expect(f.images.counters.aborted("/kept.jpg") == 0)
            await one.close()
            await two.close()
        }
    }

    @Test("thumbnail.dimensions arrives before the body is complete")
    func dimensionsBeforeBody() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(width: 1600, height: 900, seed: 4)
            f.images.serve("/dims.jpg", body: body, faults: [.stall(afterBytes: body.count / 3)])

            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 6, "url": f.images.url("/dims.jpg")]))
            let messages = try await client.collect { $0.last?.notificationMethod == "thumbnail.dimensions" }
            let dims = try #require(messages.last?.params)
            #expect(dims["width"] as? Int == 1600)
            #expect(dims["height"] as? Int == 900)
            #expect(dims["slot"] as? Int == 6)
            #expect(f.images.counters.completed("/dims.jpg") == 0)
            try await client.send(rpcLine(2, "thumbnail.recycle", ["slot": 6]))
            let answers = try await client.answers(for: [1, 2])
            #expect(answers[1]?.errorReason == "recycled")
            await client.close()
        }
    }

    @Test("progress notifications name the slot and end with the whole body")
    func progress() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(approximateBytes: 300_000, seed: 5)
            f.images.serve("/progress.jpg", body: body)
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 8, "url": f.images.url("/progress.jpg"), "view": "strip"]))
            let (answer, before) = try await client.answer(1)
            #expect(answer.resultObject != nil)
            let progress = before.filter { $0.notificationMethod == "thumbnail.progress" }.map(\.params)
            let last = try #require(progress.last)
            #expect(last["received"] as? Int == body.count)
            #expect(last["slot"] as? Int == 8)
            #expect(last["view"] as? String == "strip")
            await client.close()
        }
    }

    @Test("a closed session's loading slots stop their transfers")
    func closeStopsSlots() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(approximateBytes: 400_000)
            f.images.serve("/closing.jpg", body: body, faults: [.stall(afterBytes: 20_000)])
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": f.images.url("/closing.jpg")]))
            try await f.waitForServer { $0.requests("/closing.jpg") == 1 }
            await client.close()
            try await f.waitForServer { $0.aborted("/closing.jpg") == 1 }
        }
    }

    @Test("cancel {id} of a show answers 1007 cancelled once, and the slot is free")
    func cancelByID() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let url = f.serve("/cancel.jpg", faults: [.held])
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 0, "url": url]))
            try await f.waitForServer { $0.requests("/cancel.jpg") == 1 }
            try await client.send(rpcLine(2, "cancel", ["id": 1]))
            let answers = try await client.answers(for: [1, 2])
            #expect(answers[1]?.errorReason == "cancelled")
            #expect(answers[2]?.resultObject?["cancelled"] as? Bool == true)
            #expect(try await client.ask(3, "thumbnail.recycle", ["slot": 0]).resultObject?["cancelled"] as? Bool == false)
            f.images.release("/cancel.jpg")
            await client.close()
        }
    }
}
