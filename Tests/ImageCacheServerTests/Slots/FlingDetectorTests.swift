@testable import ImageCacheServer
import Testing

/// The contract's definition of a fling, checked at exact instants (the detector takes its
/// instants from the caller, so no test waits for real time).
@Suite("Fling detector: 3 recycles of loading slots within 250 ms", .timeLimit(.minutes(1)))
struct FlingDetectorTests {
    private let start = ContinuousClock.now
    private func at(_ ms: Int) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(ms)) }

    @Test("no recycle, one or two: not flinging")
    func fewRecyclesAreCalm() {
        var detector = FlingDetector<ContinuousClock.Instant>()
        #expect(!detector.isFlinging(at: at(0)))
        detector.recordRecycle(at: at(0))
        detector.recordRecycle(at: at(10))
        #expect(!detector.isFlinging(at: at(20)))
    }

    @Test("the third recycle within 250 ms starts a fling")
    func thirdRecycleFlings() {
        var detector = FlingDetector<ContinuousClock.Instant>()
        detector.recordRecycle(at: at(0))
        detector.recordRecycle(at: at(100))
        detector.recordRecycle(at: at(200))
        #expect(detector.isFlinging(at: at(200)))
    }

    @Test("three recycles spread over more than 250 ms are no fling")
    func spreadRecyclesAreCalm() {
        var detector = FlingDetector<ContinuousClock.Instant>()
        detector.recordRecycle(at: at(0))
        detector.recordRecycle(at: at(130))
        detector.recordRecycle(at: at(260))
        #expect(!detector.isFlinging(at: at(260)))
    }

    @Test("the fling ends when the third-newest recycle leaves the window, exactly")
    func flingEndsWhenWindowEmpties() {
        var detector = FlingDetector<ContinuousClock.Instant>()
        detector.recordRecycle(at: at(0))
        detector.recordRecycle(at: at(50))
        detector.recordRecycle(at: at(100))
        #expect(detector.flingEnd(at: at(100)) == at(250))
        #expect(detector.isFlinging(at: at(249)))
        #expect(!detector.isFlinging(at: at(250)))
    }

    @Test("further recycles prolong the fling")
    func recyclesProlong() {
        var detector = FlingDetector<ContinuousClock.Instant>()
        for ms in [0, 50, 100, 150, 200] { detector.recordRecycle(at: at(ms)) }
        // The recycles newer than 0 and 50 keep three in the window until 100 leaves it.
        #expect(detector.flingEnd(at: at(200)) == at(350))
        #expect(detector.isFlinging(at: at(300)))
        #expect(!detector.isFlinging(at: at(350)))
    }

    @Test("a long scroll keeps only the recycles of the last window")
    func pruning() {
        var detector = FlingDetector<ContinuousClock.Instant>()
        for ms in stride(from: 0, to: 10_000, by: 200) { detector.recordRecycle(at: at(ms)) }
        // One recycle every 200 ms is never three within 250 ms.
        #expect(!detector.isFlinging(at: at(9_900)))
        detector.recordRecycle(at: at(9_850))
        detector.recordRecycle(at: at(9_900))
        #expect(detector.isFlinging(at: at(9_900)))
    }

    @Test("window and threshold are parameters")
    func customDefinition() {
        var detector = FlingDetector<ContinuousClock.Instant>(window: .milliseconds(100), threshold: 2)
        detector.recordRecycle(at: at(0))
        detector.recordRecycle(at: at(90))
        #expect(detector.flingEnd(at: at(90)) == at(100))
    }
}
