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

    /// Starts watching: the signals from now on, and stdin's end when `watchingStdin` (read by
    /// a thread of its own, never one of the cooperative pool, blocked in `read` until its
    /// end; the process exits after, which ends it). Made once, first thing, so that a signal
    /// during the start is not lost.
    init(watchingStdin: Bool) {
        let (reasons, feed) = AsyncStream.makeStream(of: Reason.self)
        self.reasons = reasons
        let signals = SignalPipe.shared
        _ = signals.subscribe { feed.yield(.signal($0)) }
        signals.catchSignals([SIGTERM, SIGINT])
        if watchingStdin {
            Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 { break }
                }
                feed.yield(.stdinEnded)
            }.start()
        }
    }

    /// The first reason to stop.
    func first() async -> Reason {
        for await reason in reasons { return reason }
        return .stdinEnded
    }
}
