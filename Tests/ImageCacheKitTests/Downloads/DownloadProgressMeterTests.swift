@testable import ImageCacheKit
import Testing

/// Throttling and the rate of `download.progress`, with explicit instants (no waiting).
@Suite("Downloads: progress throttling", .timeLimit(.minutes(1)))
struct DownloadProgressMeterTests {
    @Test("at most one notification per interval, plus the final one; the rate averages the window")
    func throttled() {
        let meter = DownloadProgressMeter(job: "j", received: 0, total: 1000, interval: .milliseconds(250))
        let start = ContinuousClock.now
        let first = meter.record(received: 100, total: 1000, now: start)
        #expect(first?.received == 100)
        #expect(meter.record(received: 200, total: 1000, now: start + .milliseconds(100)) == nil)
        let second = meter.record(received: 600, total: 1000, now: start + .milliseconds(500))
        #expect(second?.received == 600)
        #expect(second.map { abs($0.bytesPerSecond - 1000) < 1 } == true)  // 500 bytes in 0.5 s
        let last = meter.record(received: 1000, total: 1000, now: start + .milliseconds(550))
        #expect(last?.received == 1000)  // complete: sent despite the interval
        meter.end()
        #expect(meter.record(received: 1000, total: 1000, now: start + .seconds(2)) == nil)
        #expect(meter.snapshot.received == 1000)
    }
}
