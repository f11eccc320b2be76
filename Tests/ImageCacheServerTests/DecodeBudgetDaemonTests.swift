import Foundation
import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Decode memory and CPU as budgets, through the daemon's socket
/// against hostile images served on loopback.
@Suite("Decode budget on the socket", .timeLimit(.minutes(5)))
struct DecodeBudgetDaemonTests {
    private var errorMessage: (_ answer: [String: Any]) -> String {
        { ($0["error"] as? [String: Any])?["message"] as? String ?? "" }
    }

    @Test("an image whose decode could never fit decode_memory is 1009 at once, and the daemon serves on")
    func neverFits() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            // An Adam7 PNG exists only after its last pass: read whole, then resized with a
            // premultiplied copy, 8 B per pixel: 374 MiB, far over 192 MiB.
            f.images.serve("/png16.png", body: HostileImages.png(width: 7000, height: 7000, interlaced: true), contentType: "image/png")
            let answer = try await client.ask(1, "thumbnail.show", ["slot": 1, "url": f.images.url("/png16.png"), "size": 200])
            #expect(answer.errorCode == 1009 && answer.errorKind == "too_large", "\(answer)")
            #expect(errorMessage(answer).contains("decode_memory"), "\(answer)")
            #expect(f.daemon.services.decodes.heldBytes == 0 && f.daemon.services.decodes.waiting == 0)
            let ok = try await client.ask(2, "thumbnail.show", ["slot": 2, "url": f.serve("/ok.jpg"), "size": 200])
            #expect(ok.resultObject?["width"] as? Int == 200, "\(ok)")
            await client.close()
        }
    }

    @Test("a progressive JPEG with 480 scans is 1008 decode_failed, refused before decoding")
    func scanBomb() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let bomb = HostileImages.repeatingLastScan(of: try Corpus.bytes("jpeg/libjpeg-turbo/testimgp.jpg"), toTotal: 480)
            f.images.serve("/bomb.jpg", body: bomb)
            let answer = try await client.ask(1, "thumbnail.show", ["slot": 1, "url": f.images.url("/bomb.jpg"), "size": 64])
            #expect(answer.errorCode == 1008 && answer.errorKind == "decode_failed", "\(answer)")
            #expect(errorMessage(answer).contains("480 scans, over the limit of \(DecodeCost.scanLimit)"), "\(answer)")
            await client.close()
        }
    }

    @Test("an ordinary cold thumbnail is decoded while heavy decodes fill their lane and another waits")
    func ordinaryPassesHeavy() async throws {
        // 16 MiB: the reserve is 2 MiB, so a 1500×1000 PNG's decode (≈ 6 MiB) is heavy and a
        // 600×400 JPEG's at 1/8 (≈ 1.1 MiB) is ordinary.
        try await ThumbnailFixture.with(configure: { $0.network.decodeMemory = 16 << 20 }) { f in
            let budget = f.daemon.services.decodes
            let client = try await f.connect()
            // Hostile decodes in flight: every slot of the heavy lane held, as long as this test says.
            let held = DecodeCost(bytes: 1 << 20, work: DecodeCost.workLimit)
            var permits: [DecodeBudget.Permit] = []
            for _ in 0..<(budget.slots - 1) { permits.append(try await budget.acquire(held)) }
            #expect(budget.heavyRunning == budget.slots - 1)

            f.images.serve("/heavy.png", body: SyntheticImages.png(width: 1500, height: 1000), contentType: "image/png")
            try await client.send(rpcLine(1, "thumbnail.show", ["slot": 1, "url": f.images.url("/heavy.png"), "size": 64]))
            try await withTimeout(seconds: 60) { try await budget.waitForWaiting(atLeast: 1) }

            let ordinary = try await client.ask(2, "thumbnail.show", ["slot": 2, "url": f.serve("/cold.jpg"), "size": 64])
            #expect(ordinary.resultObject?["width"] as? Int == 64, "\(ordinary)")
            // It was decoded and delivered while the heavy lane stayed full and the heavy request waited.
            #expect(budget.heavyRunning == budget.slots - 1)
            #expect(budget.waiting == 1)

            for permit in permits { budget.release(permit) }
            let heavy = try await client.answer(1, timeout: 60).answer
            #expect(heavy.resultObject?["width"] as? Int == 64, "\(heavy)")
            #expect(budget.heldBytes == 0)
            await client.close()
        }
    }

    @Test("decodes wait their turn for the bytes they need, then all complete")
    func waitTheirTurn() async throws {
        try await ThumbnailFixture.with(configure: { $0.network.decodeMemory = 16 << 20 }) { f in
            let budget = f.daemon.services.decodes
            let client = try await f.connect()
            // Hold all but 512 KiB (the heavy lane's share and most of the reserve): no decode fits.
            let heavy = DecodeCost(bytes: budget.memory - budget.reserve, work: 1)
            let ordinary = DecodeCost(bytes: budget.reserve - (512 << 10), work: 1)
            let heavyPermit = try await budget.acquire(heavy)
            let ordinaryPermit = try await budget.acquire(ordinary)
            for id in 1...3 {
                try await client.send(rpcLine(id, "thumbnail.show", ["slot": id, "url": f.serve("/w\(id).jpg", seed: UInt64(id)), "size": 64]))
            }
            try await withTimeout(seconds: 60) { try await budget.waitForWaiting(atLeast: 3) }
            #expect(budget.available == budget.slots - 2)
            budget.release(heavyPermit)
            budget.release(ordinaryPermit)
            let answers = try await client.answers(for: [1, 2, 3])
            for id in 1...3 { #expect(answers[id]?.resultObject?["width"] as? Int == 64, "\(String(describing: answers[id]))") }
            #expect(budget.heldBytes == 0 && budget.waiting == 0)
            await client.close()
        }
    }
}
