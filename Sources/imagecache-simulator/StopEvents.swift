import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What ends the simulator: SIGTERM or SIGINT, or (with `--watch-stdin`) the end of its
/// stdin, which is how it learns that its parent is gone, however the parent ended.
///
/// The signals go to a handler that writes their number into a pipe (the self-pipe pattern),
/// read by a thread of its own, so they arrive as an event and never kill the process
/// half-way. Not `sigwait` with the signals blocked: on Linux, libdispatch parks the main
/// thread of an async `main` in `sigsuspend` with an empty mask, so that thread takes any
/// signal no other thread blocks, and its default action would end the process; nor a
/// dispatch signal source, which reads a signalfd and so sees only signals that every thread
/// blocks.
struct StopEvents {
    /// Why the simulator stops.
    enum Reason: Sendable, Equatable {
        /// SIGTERM or SIGINT, by number.
        case signal(Int32)
        /// Stdin reached its end (or could not be read): the parent's end of the pipe closed.
        case stdinEnded
    }

    private let reasons: AsyncStream<Reason>

    /// Starts watching: the signals' handler from now on, and stdin's end when
    /// `watchingStdin`. Each source is watched by a thread of its own (never one of the
    /// cooperative pool), blocked in `read` until its event; the process exits after, which
    /// ends them. Made once, first thing, so that a signal during the start is not lost.
    init(watchingStdin: Bool) {
        let (reasons, feed) = AsyncStream.makeStream(of: Reason.self)
        self.reasons = reasons
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // A full pipe drops a repeated signal instead of blocking the handler.
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
            stopPipeWriteEnd = fds[1]
            for number in [SIGTERM, SIGINT] {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = stopSignalHandler
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                sigaction(number, &action, nil)
            }
            let readEnd = fds[0]
            Thread {
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 { break }
                    if count < 0, errno == EINTR { continue }
                    return   // cannot happen while the write end is open: the signals keep their default
                }
                feed.yield(.signal(Int32(byte)))
            }.start()
        }
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

/// The write end of the stop pipe, read by the handler: set once, before the handler is
/// installed, and never changed; a plain C integer because a handler may touch nothing else.
nonisolated(unsafe) private var stopPipeWriteEnd: Int32 = -1

/// Writes the signal's number into the pipe (`write` is async-signal-safe). Global, not a
/// closure, because C calls it on whichever thread the signal lands.
private func stopSignalHandler(_ signal: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(stopPipeWriteEnd, &byte, 1)
    errno = saved
}
