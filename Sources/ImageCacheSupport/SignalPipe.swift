import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Signals (Ctrl-C, SIGTERM) as events a program can wait for, so it cleans up instead of
/// dying mid-way: the CLI's commands (`Interrupts`) and the demo's simulator both need it.
///
/// A handler writes the signal's number into a pipe (the self-pipe pattern) and a thread of
/// its own reads it and calls whoever subscribed. Not `sigwait` with the signals blocked: on
/// Linux libdispatch parks the main thread of an async `main` in `sigsuspend` with an empty
/// mask, so that thread takes the signal and its default action ends the process. Nor a
/// dispatch signal source: it reads a signalfd, which sees a signal only if every thread
/// blocks it. A handler, unlike SIG_IGN, is reset to the default in children.
package final class SignalPipe: Sendable {
    /// The one pipe of the process, made and read from its first use.
    package static let shared: SignalPipe = {
        let pipe = SignalPipe()
        pipe.startReading()
        return pipe
    }()

    /// The read end, or -1 when no pipe could be made: then no handler is installed and the
    /// signals keep their default action.
    private let readEnd: Int32
    private let subscribers = LockedState<(next: Int, byID: [Int: @Sendable (Int32) -> Void])>((0, [:]))

    /// Whether signals can be caught (the pipe exists).
    package var isAvailable: Bool { readEnd >= 0 }

    private init() {
        guard let ends = try? CloseOnExecPipe() else {
            readEnd = -1
            return
        }
        // A full pipe drops a repeated signal rather than blocking the handler.
        _ = fcntl(ends.write, F_SETFL, fcntl(ends.write, F_GETFL) | O_NONBLOCK)
        signalPipeWriteEnd = ends.write
        readEnd = ends.read
    }

    private func startReading() {
        guard isAvailable else { return }
        let thread = Thread { [self] in
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return }
                let handlers = subscribers.withLock { Array($0.byID.values) }
                for handler in handlers { handler(Int32(byte)) }
            }
        }
        thread.name = "imagecache.signals"
        thread.start()
    }

    /// Calls `handler` (on the pipe's thread) with each caught signal's number until
    /// `unsubscribe` with the returned id.
    package func subscribe(_ handler: @escaping @Sendable (Int32) -> Void) -> Int {
        subscribers.withLock { state in
            state.next += 1
            state.byID[state.next] = handler
            return state.next
        }
    }

    /// Stops calling the handler `id` names.
    package func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.byID.removeValue(forKey: id) }
    }

    /// Sends `signals` to the pipe from now on (when it exists).
    package func catchSignals(_ signals: [Int32]) {
        guard isAvailable else { return }
        for number in signals { Self.install(signalPipeHandler, for: number) }
    }

    /// Gives `signals` their default action back.
    package func restoreDefault(_ signals: [Int32]) {
        guard isAvailable else { return }
        for number in signals { Self.install(SIG_DFL, for: number) }
    }

    private static func install(_ handler: (@convention(c) (Int32) -> Void)?, for number: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(number, &action, nil)
    }
}

/// The write end of the signal pipe, read by the handler. Set once, before any handler is
/// installed, and never changed; a plain C integer because a handler may touch nothing else.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Writes the signal's number into the pipe: `write` is async-signal-safe, and the write end
/// is non-blocking. Global, not a closure, because C calls it on whichever thread the signal
/// lands.
private func signalPipeHandler(_ signal: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = saved
}
