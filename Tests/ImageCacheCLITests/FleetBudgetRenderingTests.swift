import Foundation
import ImageCacheCLI
import ImageCacheProtocol
import Testing

/// `imagecache stats` shows each provider's fleet budget under the shared tier.
@Suite("imagecache stats: fleet budgets", .timeLimit(.minutes(1)))
struct FleetBudgetRenderingTests {
    @Test func budgetsShowUseOfLimitAndAStop() throws {
        var stats = Fixtures.stats
        stats.shared = .init(nodes: [], thumbnailHits: 0, rejected: 0, waits: 0, waitsExpired: 0, writes: 0, writesFailed: 0)
        stats.shared?.budgets = ["pixabay": .init(used: 42, limit: 100, windowSeconds: 60, stoppedUntil: 1_795_000_000),
                                 "flickr": .init(used: 0, limit: 3600, windowSeconds: 3600, stoppedUntil: nil)]
        let text = StatsSummary.render(stats)
        let lines = text.split(separator: "\n").map(String.init)
        let flickr = try #require(lines.first { $0.contains("flickr ") && $0.contains("of 3600") })
        #expect(flickr.contains("0 of 3600 per"))
        #expect(!flickr.contains("stopped"))
        let pixabay = try #require(lines.first { $0.contains("pixabay") && $0.contains("of 100") })
        #expect(pixabay.contains("42 of 100 per"))
        #expect(pixabay.contains("stopped by a quota answer until 2026-11-18T"))
        #expect(StatsSummary.render(try JSONValue(encoding: stats)) == text)
    }
}
