import ImageCacheSupport
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The one sleep every bounded wait of the child-process helpers takes: an absurd bound is
/// clamped, never trapped on.
@Suite("Support: a bounded sleep", .timeLimit(.minutes(1)))
struct BoundedSleepTests {
    @Test("NaN, negative and minus infinity sleep not at all", arguments: [Double.nan, -1, -Double.infinity, -1e300])
    func nothing(seconds: Double) async throws {
        let started = ContinuousClock.now
        try await withTimeout(seconds: 10) { await sleep(boundedSeconds: seconds) }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("an infinite or huge bound sleeps (clamped to a year) until its task is cancelled", arguments: [Double.infinity, 1e300])
    func huge(seconds: Double) async throws {
        let sleeper = Task { await sleep(boundedSeconds: seconds) }
        sleeper.cancel()
        try await withTimeout(seconds: 10) { await sleeper.value }
    }

    @Test("a pipe's text within a NaN, negative or infinite bound: what was read, no trap")
    func pipeText() async throws {
        let pipe = try CloseOnExecPipe()
        let drain = PipeDrain(pipe.read)
        _ = "partial".withCString { write(pipe.write, $0, 7) }
        // The open pipe has not ended: NaN and negative bounds wait no time.
        for bound in [Double.nan, -1, -Double.infinity] {
            _ = try await withTimeout(seconds: 10) { await drain.text(within: bound) }
        }
        close(pipe.write)
        // Ended: an infinite bound returns with the end, not after it.
        #expect(try await withTimeout(seconds: 10) { await drain.text(within: .infinity) } == "partial")
    }
}
