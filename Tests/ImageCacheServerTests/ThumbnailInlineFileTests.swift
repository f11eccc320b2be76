import Foundation
@testable import ImageCacheServer
import ImageCacheKit
import NIOCore
import Testing
import TestSupport

/// A hot inline thumbnail's base64 is sent from a sealed memory file (`SealedMemoryFile`,
/// `OutboundLimiter`): the bytes a client reads are the same as from a buffer, and a file the
/// memory tier drops while answers from it still wait to be written keeps serving them.
@Suite("Inline thumbnails sent from sealed files", .timeLimit(.minutes(3)))
struct ThumbnailInlineFileTests {
    @Test("answers still waiting to be written when their thumbnail is evicted arrive whole")
    func clearWhileAnswersWait() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let url = f.serve("/hot.jpg", width: 800, height: 600, seed: 9)
            let params: [String: Any] = ["url": url, "size": 400, "inline": true]

            // Made and kept: the second show is a memory hit, answered from the entry's file.
            let first = try #require(try await client.ask(1, "thumbnail.show", params.merging(["slot": 0]) { $1 }).resultObject)
            let expected = try #require(first["data"] as? String)
            let hit = try #require(try await client.ask(2, "thumbnail.show", params.merging(["slot": 1]) { $1 }).resultObject)
            #expect(hit["source"] as? String == "memory")
            #expect(hit["data"] as? String == expected)
            // …held by the server in a sealed file (not the string a spent budget would leave).
            var journey = f.daemon.services.pipeline.journey(to: .url(url), size: 400, wantsBytes: true)
            let hitInMemory = journey.memoryHit()
            let delivery = try #require(hitInMemory)
            #expect(f.daemon.services.inlineData.statistics.entries == 1)
            let held = f.daemon.services.inlineData.encoded(delivery, lineEnd: [])
            guard case .file? = held else {
                Issue.record("the server holds no sealed file for the thumbnail: \(String(describing: held))")
                return
            }

            // A client that asks for many and reads none: the answers fill the socket, then queue
            // in the daemon (which stops reading it) — files referenced by writes not yet done.
            // About 1.5 MB of answers: past what the kernel's buffers take plus the soft bound
            // (256 KiB), well under the hard bound (4 MiB) that would close the connection.
            let stalled = try await f.connect(reading: false)
            let count = max(8, min(400, 1_500_000 / expected.utf8.count))
            var batch = ""
            for slot in 0..<count { batch += rpcLine(100 + slot, "thumbnail.show", params.merging(["slot": slot]) { $1 }) + "\n" }
            try await stalled.send(bytes: Array(batch.utf8))
            try await withTimeout(seconds: 60) { try await f.daemon.server.metrics.readPauseCount.wait { $0 > 0 } }

            // The memory tier lets go of the entry, and the server of its file.
            let evicted = try await client.ask(3, "cache.evict", ["url": url])
            #expect((evicted.resultObject?["removed"] as? Int ?? 0) > 0, "\(evicted)")
            #expect(f.daemon.services.inlineData.statistics.entries == 0)

            // Every answer arrives, whole; those that were waiting carry the file's bytes.
            try await stalled.channel.setOption(ChannelOptions.autoRead, value: true).get()
            var fromMemory = 0
            for _ in 0..<count {
                let message = try await stalled.readMessage(timeout: 60)
                let result = try #require(message.resultObject, "\(message)")
                let data = try #require((result["data"] as? String).flatMap { Data(base64Encoded: $0) })
                #expect(data.count == result["bytes"] as? Int)
                if result["source"] as? String == "memory" {
                    fromMemory += 1
                    #expect(result["data"] as? String == expected)
                }
            }
            #expect(fromMemory > 0)
            await stalled.close()
            await client.close()
        }
    }
}
