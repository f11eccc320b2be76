import Foundation
import ImageCacheSupport
#if canImport(Glibc)
import Glibc
#endif

/// What ends the simulator: SIGTERM or SIGINT, or (with `--watch-stdin`) the end of its
/// stdin, which is how it learns that its parent is gone, however the parent ended.
///
/// The signals arrive through the process's `SignalPipe`, as an event, so they never kill the
/// process half-way.
struct StopEvents {
    /// Why the simulator stops.
    enum Reason: Sendable, Equatable {
        /// SIGTERM or SIGINT, by number.
        case signal(Int32)
        /// Stdin reached its end (or could not be read): the parent's end of the pipe closed.
        case stdinEnded
    }

    private let reasons: AsyncStream<Reason>

    /// Starts watching: the signals from now on, and stdin's end when `watchingStdin`
    /// (`StdinLifeline`). Made once, first thing, so that a signal during the start is not lost.
    init(watchingStdin: Bool) {
        let (reasons, feed) = AsyncStream.makeStream(of: Reason.self)
        self.reasons = reasons
        let signals = SignalPipe.shared
        _ = signals.subscribe { feed.yield(.signal($0)) }
        signals.catchSignals([SIGTERM, SIGINT])
        if watchingStdin {
            let ended = StdinLifeline.ended()
            Task {
                for await _ in ended { feed.yield(.stdinEnded) }
            }
        }
    }

    /// The first reason to stop.
    func first() async -> Reason {
        for await reason in reasons { return reason }
        return .stdinEnded
    }
}
