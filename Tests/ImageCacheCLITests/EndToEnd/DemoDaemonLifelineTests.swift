import DaemonChild
import Testing
import TestSupport
@testable import ImageCacheCLI

/// The demo's daemon lives only as long as the demo: its stdin is a pipe only the demo holds.
@Suite("The demo's daemon ends with the demo", .timeLimit(.minutes(3)))
struct DemoDaemonLifelineTests {
    @Test("the daemon the demo starts stops with status 0 once the demo's end of its stdin closes, as when the demo is killed")
    func endsWithTheDemo() async throws {
        let live = try await LiveDaemon.start()
        live.daemon.cutLifeline()
        #expect(await live.daemon.exit(within: 60 * timeoutScale) == 0, "\(live.daemon.logTail())")
        _ = await live.stop()
    }
}
